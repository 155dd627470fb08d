package otelsink

import "runtime/debug"

// modulePath is the module this package is part of, looked for in the
// binary's build info.
const modulePath = "github.com/llmhistory/llmhistory"

// ScopeVersion is the version of the instrumentation scope of the spans
// and metrics: the version of this module the program was built with (a
// release tag or a pseudo-version), or "devel" for a build from a
// checkout, which has none. Backends show it beside [ScopeName], so that
// a change in the spans can be traced to an upgrade.
var ScopeVersion = moduleVersion()

func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	m := &bi.Main
	if m.Path != modulePath {
		m = nil
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				m = d
				break
			}
		}
	}
	if m == nil {
		return "devel"
	}
	if m.Replace != nil && m.Replace.Version != "" {
		return m.Replace.Version
	}
	if m.Version == "" || m.Version == "(devel)" {
		return "devel"
	}
	return m.Version
}
