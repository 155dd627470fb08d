package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// modulePath is the module this command belongs to.
const modulePath = "github.com/llmhistory/llmhistory"

// selfCommand is how to run this command again from the same directory,
// as the user ran it: a hint printed with it works when pasted.
func selfCommand() string {
	exe, _ := os.Executable()
	cwd, _ := os.Getwd()
	return commandFor(os.Args[0], exe, cwd)
}

// commandFor decides selfCommand from the command's first argument as
// typed, the executable's path and the working directory.
//
// A binary that go run built lives in a temporary directory that is gone
// once it exits: the hint is go run again, from the module's root with a
// relative path, elsewhere in the module with the package's path, and
// outside it with @latest. A binary found through PATH is named by its
// name; one run by a path, by that path.
func commandFor(arg0, exe, cwd string) string {
	if builtByGoRun(exe) {
		switch root := moduleRoot(cwd); {
		case root == "":
			return "go run " + modulePath + "/cmd/llmhistory@latest"
		case root == cwd:
			return "go run ./cmd/llmhistory"
		default:
			return "go run " + modulePath + "/cmd/llmhistory"
		}
	}
	if arg0 == "" {
		return "llmhistory"
	}
	return shellQuote(arg0)
}

// builtByGoRun reports whether exe is a binary go run built: the first run
// builds it in $WORK/b001/exe/, $WORK being a go-build directory; from Go
// 1.24 on, later runs start the copy go run cached in the build cache,
// $GOCACHE/xx/<64 hex digits>-d/.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	work := filepath.Dir(filepath.Dir(dir))
	if filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(work), "go-build") {
		return true
	}
	entry, shard := filepath.Base(dir), filepath.Base(filepath.Dir(dir))
	hash, ok := strings.CutSuffix(entry, "-d")
	return ok && len(hash) == 64 && len(shard) == 2 && isHex(hash) && hash[:2] == shard
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// moduleRoot returns the directory at or above dir whose go.mod declares
// this module, or "".
func moduleRoot(dir string) string {
	for {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				fields := strings.Fields(sc.Text())
				if len(fields) >= 2 && fields[0] == "module" {
					f.Close()
					if strings.Trim(fields[1], `"`) == modulePath {
						return dir
					}
					return "" // another module's go.mod ends the search
				}
			}
			f.Close()
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
