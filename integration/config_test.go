package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"

	"github.com/llmhistory/llmhistory/integration/internal/otlptest"
	"github.com/llmhistory/llmhistory/internal/otelsinktest"
	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// collectorYAML is the Collector configuration docs/opentelemetry.md
// shows; it stays beside otelsink, where the page's docker command
// mounts it from.
var collectorYAML = filepath.Join("..", "otelsink", "testdata", "collector.yaml")

// The Collector configuration of docs/opentelemetry.md
// (otelsink/testdata/collector.yaml) works: every component in it exists in the Collector and takes its
// settings (each unmarshalled into the component's own configuration and
// validated), every pipeline names components that are defined, and its
// OTLP receiver, built from the file, takes what otelsink sends over
// HTTP and gRPC.
func TestCollectorConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(collectorYAML)
	require.NoError(t, err)

	factories := map[string][]component.Factory{
		"receivers":  {otlpreceiver.NewFactory()},
		"processors": {batchprocessor.NewFactory(), memorylimiterprocessor.NewFactory()},
		"exporters":  {otlpexporter.NewFactory(), otlphttpexporter.NewFactory()},
	}
	defined := map[string]map[component.ID]component.Config{}
	for kind, fs := range factories {
		byType := map[component.Type]component.Factory{}
		for _, f := range fs {
			byType[f.Type()] = f
			if old, ok := f.(interface{ DeprecatedAlias() component.Type }); ok && old.DeprecatedAlias().String() != "" {
				byType[old.DeprecatedAlias()] = f // the name older Collectors know
			}
		}
		section, err := cm.Sub(kind)
		require.NoError(t, err)
		defined[kind] = map[component.ID]component.Config{}
		for name := range section.ToStringMap() {
			var id component.ID
			require.NoError(t, id.UnmarshalText([]byte(name)), "%s: %s", kind, name)
			f, ok := byType[id.Type()]
			require.True(t, ok, "%s: the Collector has no component %q", kind, id.Type())
			cfg := f.CreateDefaultConfig()
			sub, err := section.Sub(name)
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg), "%s %s", kind, name)
			require.NoError(t, confmap.Validate(cfg), "%s %s", kind, name)
			defined[kind][id] = cfg
		}
	}

	pipelines, err := cm.Sub("service::pipelines")
	require.NoError(t, err)
	signals := map[pipeline.Signal]bool{}
	for name := range pipelines.ToStringMap() {
		var pid pipeline.ID
		require.NoError(t, pid.UnmarshalText([]byte(name)))
		signals[pid.Signal()] = true
		sub, err := pipelines.Sub(name)
		require.NoError(t, err)
		var p struct {
			Receivers  []component.ID `mapstructure:"receivers"`
			Processors []component.ID `mapstructure:"processors"`
			Exporters  []component.ID `mapstructure:"exporters"`
		}
		require.NoError(t, sub.Unmarshal(&p))
		require.NotEmpty(t, p.Receivers, name)
		require.NotEmpty(t, p.Exporters, name)
		for kind, ids := range map[string][]component.ID{"receivers": p.Receivers, "processors": p.Processors, "exporters": p.Exporters} {
			for _, id := range ids {
				assert.Contains(t, defined[kind], id, "pipeline %s uses %s %s, which is not defined", name, kind, id)
			}
		}
	}
	assert.Equal(t, map[pipeline.Signal]bool{pipeline.SignalTraces: true, pipeline.SignalMetrics: true, pipeline.SignalLogs: true}, signals)

	// The receiver, as configured there (on loopback ports of the test's
	// own), takes otelsink's spans over both protocols.
	rcfg := defined["receivers"][component.MustNewID("otlp")].(*otlpreceiver.Config)
	c := otlptest.Start(t, rcfg)
	for _, protocol := range []string{"http", "grpc"} {
		se, _ := otelsinktest.Exporters(t, c.GRPC, c.HTTP, protocol)
		sink, err := otelsink.New(otelsink.Options{SpanExporter: se})
		require.NoError(t, err)
		require.NoError(t, sink.Append(context.Background(), record.Record{CallID: "via-" + protocol, Timestamp: "2026-11-21T09:30:00Z",
			Speaker: "user", MethodName: "openai.chat.completions.create", Outcome: record.Success("chat.completion")}))
		require.NoError(t, sink.Close())
	}
	otlpfake.WaitFor(t, "both spans", func() bool { return c.SpanCount() == 2 })
	assert.Contains(t, c.Spans(t), "via-http")
	assert.Contains(t, c.Spans(t), "via-grpc")
}

// The Collector configuration docs/opentelemetry.md shows is the file
// TestCollectorConfig loads into the Collector's own components: the
// page shows the configuration that is tested.
func TestDocsShowTheTestedCollectorConfig(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "docs", "opentelemetry.md"))
	require.NoError(t, err)
	cfg, err := os.ReadFile(collectorYAML)
	require.NoError(t, err)
	assert.Contains(t, string(page), "```yaml\n"+string(cfg)+"```\n")
}
