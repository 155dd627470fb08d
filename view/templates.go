package view

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// parseTemplates returns each page's template: the layout and partials
// with the page's own "content" (and "aside"), links beginning with
// prefix.
func parseTemplates(prefix string) map[string]*template.Template {
	esc := url.PathEscape
	filterURLOn := func(page, key, value string) string {
		return prefix + page + "?" + url.Values{key: {value}}.Encode()
	}
	funcs := template.FuncMap{
		"base":        func() string { return prefix },
		"convURL":     func(id string) string { return prefix + "c/" + esc(id) },
		"treeURL":     func(id string) string { return prefix + "c/" + esc(id) + "/tree" },
		"callURL":     func(id string) string { return prefix + "call/" + esc(id) },
		"convPage":    func(id string, n int) string { return prefix + "c/" + esc(id) + pageQuery(n) },
		"filterURL":   func(key, value string) string { return filterURLOn("", key, value) },
		"filterURLOn": filterURLOn,
		"listURL": func(f form, cursor string) string {
			if q := f.Encode(cursor); q != "" {
				return prefix + "?" + q
			}
			return prefix
		},
		"filters": func(f form, facets Facets, search bool) any {
			action := prefix
			if !search {
				action = prefix + "overview"
			}
			return struct {
				Form   form
				Facets Facets
				Search bool
				Action string
			}{f, facets, search, action}
		},
		"spendTable": func(title, id, key string, groups []Group, max float64) any {
			return struct {
				Title, ID, Key string
				Groups         []Group
				Max            float64
			}{title, id, key, groups, max}
		},
		"roleName": roleName,
		"failed":   func(r any) bool { return recordOf(r).Outcome.Status != record.StatusOK },
		"model":    func(r any) string { return modelOf(recordOf(r)) },
		"depth": func(r any) int {
			if d := recordOf(r).Depth; d != nil {
				return *d
			}
			return 0
		},
		"usd":     usd,
		"ms":      human,
		"num":     func(n int) string { return group(int64(n)) },
		"num64":   group,
		"short64": short,
		"pct":     func(f float64) string { return percent(int64(f*1000), 1000) },
		"pct64":   func(n, d int) string { return percent(int64(n), int64(d)) },
		"share64": percent,
		"plural":  plural,
		"when":    when,
		"clock":   clock,
		"stamp":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") },
		"snippet": snippet,
		"span": func(first, last time.Time) string {
			if first.IsZero() || last.IsZero() || first.UTC().YearDay() != last.UTC().YearDay() || first.Year() != last.Year() {
				return when(first) + " – " + when(last)
			}
			return when(first) + " – " + clock(last)
		},
		"inc":        func(n int) int { return n + 1 },
		"dec":        func(n int) int { return n - 1 },
		"add64":      func(a, b int64) int64 { return a + b },
		"addf":       func(a, b float64) float64 { return a + b },
		"share":      share,
		"join":       strings.Join,
		"title":      conversationTitle,
		"statusText": http.StatusText,
		"isOther":    isOther,
		"scoreValue": scoreValue,
		"groupText":  groupText,
		"shortID":    func(id string) string { return snippetN(id, 12) },
		"dayOf":      func(rfc string) string { return strings.TrimSuffix(rfc, "T00:00:00Z") },
	}
	base := template.Must(template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/scores.html"))
	pages := map[string]*template.Template{}
	for _, name := range []string{"conversations", "conversation", "tree", "call", "overview", "error"} {
		t := template.Must(base.Clone())
		pages[name] = template.Must(t.ParseFS(templateFS, "templates/"+name+".html"))
	}
	return pages
}

func pageQuery(n int) string {
	if n <= 0 {
		return ""
	}
	return "?page=" + itoa(n)
}

func itoa(n int) string { return strconv.Itoa(n) }

func recordOf(v any) *record.Record {
	switch r := v.(type) {
	case *record.Record:
		return r
	case record.Record:
		return &r
	}
	return &record.Record{}
}

// roleName is how a message's speaker is labelled.
func roleName(m *message) string {
	name := map[string]string{
		roleSystem: "System", roleUser: "User", roleAssistant: "Assistant", roleTool: "Tool", roleOther: "Record",
	}[m.Role]
	if m.Label != "" {
		name += " (" + m.Label + ")"
	}
	return name
}

// isOther reports whether a group's name is the row that sums the groups
// past the ones a table lists ("(483 others)", query.go).
func isOther(name string) bool {
	return strings.HasPrefix(name, "(") && strings.HasSuffix(name, " others)")
}
