package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// Records grouped by user and by tag: the largest first, then the rest
// summed as "(other)", in every format. The figures are worked by hand.
func TestGroupsByUserAndTag(t *testing.T) {
	var recs []record.Record
	add := func(user string, tags []string, usd float64, ok bool, ms float64) {
		r := call(fmt.Sprintf("c%d", len(recs)), len(recs))
		r.UserID, r.Tags, r.DurationMS = user, tags, ms
		r.Usage = &record.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
		if usd > 0 {
			r.Cost = &record.Cost{USD: usd, Table: "t"}
		}
		if !ok {
			r.Outcome = record.Failure(record.ErrorRateLimit)
		}
		recs = append(recs, r)
	}
	// user-42: 3 records, one failed, $0.30, 100/200/300 ms.
	add("user-42", []string{"checkout"}, 0.10, true, 100)
	add("user-42", []string{"checkout", "beta"}, 0.10, false, 200)
	add("user-42", nil, 0.10, true, 300)
	// user-7: 2 records, $0.05 and one unpriced.
	add("user-7", []string{"search"}, 0.05, true, 50)
	add("user-7", []string{"search"}, 0, true, 70)
	// three users of one record each, and one record without a user.
	add("u-a", []string{"checkout"}, 0.01, true, 10)
	add("u-b", nil, 0.01, true, 10)
	add("u-c", nil, 0.01, true, 10)
	add("", []string{"beta"}, 0.02, true, 10)

	b := report.NewBuilder(report.Options{TopGroups: 2})
	for _, r := range recs {
		b.Add(r)
	}
	rep := b.Report()
	require.Len(t, rep.Users, 3, "the top two, then the rest")
	assert.Equal(t, report.Group{Name: "user-42", Records: 3, Errors: 1, InputTokens: 300, OutputTokens: 30, TotalTokens: 330, USD: 0.3, P50MS: rep.Users[0].P50MS, P95MS: rep.Users[0].P95MS}, rep.Users[0])
	assert.InDelta(t, 200, rep.Users[0].P50MS, 200*0.02, "the median of 100, 200, 300 ms")
	assert.InDelta(t, 300, rep.Users[0].P95MS, 300*0.02)
	assert.Equal(t, "user-7", rep.Users[1].Name)
	assert.EqualValues(t, 1, rep.Users[1].Unpriced)
	assert.InDelta(t, 0.05, rep.Users[1].USD, 1e-12)
	other := rep.Users[2]
	assert.Equal(t, "(other)", other.Name)
	assert.EqualValues(t, 4, other.Records, "u-a, u-b, u-c and (none)")
	assert.InDelta(t, 0.05, other.USD, 1e-12)

	// Tags: checkout 2+1=3... a record with two tags counts in both.
	names := map[string]int64{}
	for _, g := range rep.Tags {
		names[g.Name] = g.Records
	}
	assert.Equal(t, map[string]int64{"(none)": 3, "checkout": 3, "(other)": 4}, names, "(none) and checkout lead; beta 2 and search 2 are summed")

	var js, md, html bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	require.NoError(t, rep.WriteMarkdown(&md))
	require.NoError(t, rep.WriteHTML(&html))
	var back report.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, rep.Users, back.Users)
	assert.Contains(t, md.String(), "### Users")
	assert.Contains(t, md.String(), "| user-42 | 3 | 1 | 330 |")
	assert.Contains(t, md.String(), "### Tags")
	assert.Contains(t, html.String(), "<h3>Users</h3>")
	assert.Contains(t, html.String(), "<td>user-42</td>")
}

// A history without users or tags shows neither section: a table of
// "(none)" alone says nothing.
func TestGroupsLeftOutWhenUnused(t *testing.T) {
	b := report.NewBuilder(report.Options{})
	b.Add(call("a", 0))
	rep := b.Report()
	require.Len(t, rep.Users, 1)
	assert.Equal(t, "(none)", rep.Users[0].Name)
	var md, html bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	require.NoError(t, rep.WriteHTML(&html))
	assert.NotContains(t, md.String(), "### Users")
	assert.NotContains(t, html.String(), "<h3>Tags</h3>")
	assert.False(t, strings.Contains(md.String(), "### Tags"))
}
