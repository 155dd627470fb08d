package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// TestDemoOffline runs the demo as a newcomer would, on the embedded fake
// providers, and checks the history file holds what the demo promises.
func TestDemoOffline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	code, stdout, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "a fake OpenAI server at http://127.0.0.1:")
	assert.Contains(t, stderr, "a fake Gemini server at http://127.0.0.1:")
	assert.Contains(t, stderr, "a fake Anthropic server at http://127.0.0.1:")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, key := range []string{pastedKey, fakeOpenAIKey, fakeGeminiKey, fakeAnthropicKey} {
		assert.NotContains(t, string(data), key, "a key reached the history file")
		assert.NotContains(t, stderr+stdout, key, "a key reached the screen")
	}
	assert.Contains(t, string(data), "[REDACTED]")

	all, err := record.ReadJSONL(bytes.NewReader(data))
	require.NoError(t, err)
	require.Len(t, all, 13, "one record per logical call")

	// Four conversations of three users, each on its trace, attributed
	// and tagged: what fills the viewer's list.
	type conv struct {
		user  string
		tags  []string
		calls int
	}
	convs := map[string]conv{}
	var traces []string
	for _, r := range all {
		c, seen := convs[r.TraceID]
		if !seen {
			traces = append(traces, r.TraceID)
		}
		c.user, c.tags, c.calls = r.UserID, r.Tags, c.calls+1
		convs[r.TraceID] = c
	}
	require.Len(t, traces, 4)
	assert.Equal(t, []conv{
		{"maria", []string{"travel-assistant"}, 9},
		{"tom", []string{"support"}, 2},
		{"li", []string{"translate"}, 1},
		{"tom", []string{"support", "escalation"}, 1},
	}, []conv{convs[traces[0]], convs[traces[1]], convs[traces[2]], convs[traces[3]]})
	for i, tr := range traces {
		assert.True(t, strings.HasPrefix(tr, demoTracePrefix), tr)
		assert.True(t, strings.HasSuffix(tr, fmt.Sprintf("-%d", i+1)), tr)
		assert.Contains(t, stderr, "trace "+tr+"\n", "each conversation's heading names its trace")
	}

	// The agent conversation shows what a record holds.
	var recs []record.Record
	for _, r := range all {
		if r.TraceID == traces[0] {
			recs = append(recs, r)
		}
	}
	byID := map[string]record.Record{}
	var retried, tool, nested, oaStream, gmStream, failed, redacted, claude []record.Record
	for _, r := range recs {
		byID[r.CallID] = r
		assert.True(t, r.HistoryRecordAppended)
		assert.True(t, r.HistoryGuidance, "every chat call carried the guidance")
		switch {
		case r.Attempts == 2:
			retried = append(retried, r)
		case r.HistoryAccessDetected:
			tool = append(tool, r)
		case r.ParentCallID != "":
			nested = append(nested, r)
		case r.MethodName == "gemini.models.streamGenerateContent":
			gmStream = append(gmStream, r)
		case r.MethodName == "anthropic.messages.create":
			claude = append(claude, r)
		case !r.Outcome.OK:
			failed = append(failed, r)
		case gjson.GetBytes(r.Kwargs, "stream").Bool():
			oaStream = append(oaStream, r)
		case strings.Contains(string(r.Args), "[REDACTED]"):
			redacted = append(redacted, r)
		}
	}
	require.Len(t, retried, 1, "the 429 and its retry fold into one record")
	assert.True(t, retried[0].Outcome.OK)

	require.Len(t, tool, 1)
	assert.Subset(t, tool[0].HistoryQueryPatterns, []string{"filter", "map", "slice", "count"})
	assert.Contains(t, tool[0].ProgramSource, "conversation_history")

	require.Len(t, nested, 1)
	assert.Equal(t, tool[0].CallID, nested[0].ParentCallID)
	require.NotNil(t, nested[0].Depth)
	assert.Equal(t, 1, *nested[0].Depth)
	assert.Equal(t, record.SpeakerTool, nested[0].Speaker)
	assert.Equal(t, "gemini.models.generateContent", nested[0].MethodName)

	require.Len(t, oaStream, 1)
	assert.Equal(t, "stop", oaStream[0].Outcome.FinishReason)
	require.NotNil(t, oaStream[0].Usage, "usage from the stream's last chunk")
	require.Len(t, gmStream, 1)
	require.NotNil(t, gmStream[0].Usage)
	assert.Equal(t, 17, gmStream[0].Usage.OutputTokens)

	require.Len(t, claude, 1, "the Claude turn, through Anthropic's SDK")
	assert.Equal(t, record.SpeakerAgent, claude[0].Speaker)
	assert.Equal(t, string(defaultClaude), claude[0].Model)
	assert.Equal(t, "end_turn", claude[0].Outcome.FinishReason)
	require.NotNil(t, claude[0].Usage)
	assert.Positive(t, claude[0].Usage.OutputTokens)
	assert.Contains(t, string(claude[0].Args), "Check this packing advice")

	require.Len(t, failed, 1)
	assert.Equal(t, record.ErrorNotFound, failed[0].ErrorType)
	assert.Equal(t, 404, failed[0].Outcome.HTTPStatus)
	require.Len(t, redacted, 1)

	// The report on stdout is the one built from the file.
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	assert.Equal(t, int64(13), rep.Summary.Records)
	assert.Equal(t, int64(14), rep.Summary.Calls, "13 logical calls, one of them tried twice")
	providers := map[string]int64{}
	for _, p := range rep.Providers {
		providers[p.Name] = p.Records
	}
	assert.Equal(t, map[string]int64{"openai": 8, "gemini": 3, "anthropic": 2}, providers)
	for _, p := range rep.Patterns {
		assert.NotEmpty(t, p.Example, "an example span for %s", p.Tag)
	}
	verdicts := map[string]string{}
	for _, c := range rep.Checklist {
		verdicts[c.ID] = c.Verdict
	}
	for _, id := range []string{"append_success", "guidance_presence", "access_detected", "no_duplicates", "retries_collapsed"} {
		assert.Equal(t, report.Met, verdicts[id], id)
	}

	// The recorder priced every call it could; the report adds them up and
	// says which were not priced, and why: the failed call has no usage.
	// The closing summary gives the spend.
	var spent float64
	var priced, unknown int64
	for _, r := range all {
		switch {
		case r.Cost != nil:
			spent += r.Cost.USD
			priced++
		case r.Usage != nil:
			unknown++
		}
	}
	// Every call that returned usage (all but the 404) is priced: the
	// demo asks models the built-in table knows, so its report shows no
	// unpriced call (issue 30's first hour).
	assert.Equal(t, int64(12), priced)
	assert.Zero(t, unknown)
	assert.InDelta(t, spent, rep.Spend.USD, 1e-12)
	assert.Equal(t, priced, rep.Spend.PricedRecords)
	assert.Zero(t, rep.Spend.UnpricedRecords)
	assert.Equal(t, int64(1), rep.Spend.NoUsageRecords, "the 404")
	assert.Contains(t, stderr, fmt.Sprintf("\n  spend %s · calls by provider: openai 8, gemini 3, anthropic 2 · 1 retried · 1 in error\n", report.FormatUSD(spent)))
	// The checklist item a demo cannot meet says why, in the summary and
	// in the report.
	assert.Contains(t, stderr, "checklist 5 of 6 met (the other needs 100+ records)")
	for _, c := range rep.Checklist {
		if c.ID == "evidence_stream" {
			assert.Contains(t, c.Figure, "a short run (the demo's) cannot meet it")
		}
	}
}

// TestDemoRealProviders runs the path taken when keys are set, against
// servers standing in for the providers' endpoints (OPENAI_BASE_URL,
// GOOGLE_GEMINI_BASE_URL, ANTHROPIC_BASE_URL): the keys come from the
// environment, and none reaches the file.
func TestDemoRealProviders(t *testing.T) {
	oa := httptest.NewServer(fakeOpenAI())
	defer oa.Close()
	gm := httptest.NewServer(fakeGemini())
	defer gm.Close()
	an := httptest.NewServer(fakeAnthropic())
	defer an.Close()
	t.Setenv("OPENAI_API_KEY", fakeOpenAIKey)
	t.Setenv("OPENAI_BASE_URL", oa.URL+"/v1")
	t.Setenv("GEMINI_API_KEY", fakeGeminiKey)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", gm.URL)
	t.Setenv("ANTHROPIC_API_KEY", fakeAnthropicKey)
	t.Setenv("ANTHROPIC_BASE_URL", an.URL)
	t.Setenv("OPENAI_MODEL", "")
	t.Setenv("GEMINI_MODEL", "")
	t.Setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")

	path := filepath.Join(t.TempDir(), "history.jsonl")
	code, _, stderr := runCmd(t, "", "demo", "-provider", "real", "-o", path, "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "OpenAI: "+oa.URL+"/v1 (gpt-4o-mini)")
	assert.Contains(t, stderr, "Gemini: "+gm.URL+" (gemini-2.5-flash)")
	assert.Contains(t, stderr, "Claude: "+an.URL+" (claude-haiku-4-5)")
	assert.NotContains(t, stderr, "fake")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, err := record.ReadJSONL(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Len(t, recs, 13)
	var models []string
	for _, r := range recs {
		if r.MethodName == "anthropic.messages.create" {
			models = append(models, r.Model)
		}
	}
	assert.Equal(t, []string{"claude-haiku-4-5", "claude-haiku-4-5"}, models, "ANTHROPIC_MODEL picks the model")
	for _, key := range []string{fakeOpenAIKey, fakeGeminiKey, fakeAnthropicKey} {
		assert.NotContains(t, string(data), key)
	}

	// auto calls for real the providers whose key is set, and fakes the
	// others: here Claude alone, and no Anthropic variable reaches a fake.
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	code, _, stderr = runCmd(t, "", "demo", "-o", path, "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "Claude: "+an.URL+" (claude-haiku-4-5)")
	assert.Contains(t, stderr, "OpenAI: a fake OpenAI server")

	t.Setenv("ANTHROPIC_API_KEY", "")
	code, _, stderr = runCmd(t, "", "demo", "-o", path, "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "Claude: a fake Anthropic server at http://127.0.0.1:")
	assert.NotContains(t, stderr, an.URL, "ANTHROPIC_BASE_URL is for the real API only")
}

func TestDemoBadFlags(t *testing.T) {
	code, _, stderr := runCmd(t, "", "demo", "-provider", "psychic")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-provider must be auto, fake or real")

	code, _, stderr = runCmd(t, "", "demo", "-format", "pdf")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-format must be")

	t.Setenv("OPENAI_API_KEY", "")
	code, _, stderr = runCmd(t, "", "demo", "-provider", "real", "-o", filepath.Join(t.TempDir(), "h.jsonl"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "needs OPENAI_API_KEY, GEMINI_API_KEY and ANTHROPIC_API_KEY")
}

func TestDemoUnwritableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "history.jsonl")
	code, _, stderr := runCmd(t, "", "demo", "-provider", "fake", "-o", path)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "llmhistory demo: ")
	assert.Contains(t, stderr, "no such file or directory")
	assert.NotContains(t, stderr, "goroutine", "no stack trace")
}
