package proof

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingPath are the packages a program that only records compiles.
var recordingPath = []string{"../../middleware", "../../record", "../../providers/..."}

// allowedModules are the only modules besides this one and the standard
// library that the recording path may link: gjson and sjson, with theirs.
var allowedModules = []string{"github.com/tidwall/gjson", "github.com/tidwall/sjson", "github.com/tidwall/match", "github.com/tidwall/pretty"}

func goTool(t *testing.T) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	return g
}

// The recording path links no vendor SDK, no gRPC, no cloud auth and no
// OpenTelemetry: only the standard library, this module, gjson and sjson.
func TestRecordingPathLinksNoSDK(t *testing.T) {
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, recordingPath...)
	out, err := exec.Command(goTool(t), args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, pkg := range strings.Fields(string(out)) {
		ok := strings.HasPrefix(pkg, "github.com/llmhistory/llmhistory/")
		for _, m := range allowedModules {
			ok = ok || pkg == m || strings.HasPrefix(pkg, m+"/")
		}
		assert.True(t, ok, "the recording path links %s", pkg)
	}
}

// A program that only records is built, and its size set beside a bare
// net/http program's; the modules it embeds are the allowed ones.
func TestRecorderOnlyBinary(t *testing.T) {
	g := goTool(t)
	dir := t.TempDir()
	size := map[string]int64{}
	for _, prog := range []string{"bare", "recorder"} {
		bin := filepath.Join(dir, prog)
		out, err := exec.Command(g, "build", "-o", bin, "./testdata/size/"+prog).CombinedOutput()
		require.NoError(t, err, "%s", out)
		fi, err := os.Stat(bin)
		require.NoError(t, err)
		size[prog] = fi.Size()
		if prog == "recorder" {
			out, err := exec.Command(g, "version", "-m", bin).CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, line := range strings.Split(string(out), "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && f[0] == "dep" {
					assert.Contains(t, allowedModules, f[1], "the recorder-only binary embeds %s", f[1])
				}
			}
		}
	}
	t.Logf("bare net/http program: %.1f MB; recorder-only program: %.1f MB (+%.1f MB)",
		float64(size["bare"])/1e6, float64(size["recorder"])/1e6, float64(size["recorder"]-size["bare"])/1e6)
}

// The module's own tests need no OpenTelemetry Collector: its receiver
// and components (about 190 packages) are compiled only by the
// integration module, so that a fresh clone's first go test ./... does
// not wait for them. (go mod tidy, which CI checks, would add them here
// if a test of this module imported one.)
func TestModuleRequiresNoCollector(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(gomod), "\n") {
		assert.NotContains(t, line, "go.opentelemetry.io/collector", "go.mod: move the test that needs it to integration/")
	}
}
