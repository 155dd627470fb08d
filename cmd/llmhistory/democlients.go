package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	openai "github.com/sashabaranov/go-openai"
	"google.golang.org/genai"
)

// The demo's clients: go-openai, genai and the Anthropic SDK, each given
// the recorder's *http.Client (the one line an application adds), each
// talking to the real provider when its key is set and -provider allows,
// or to an embedded fake server on loopback (fake.go).

// providerChoice says which providers the demo calls for real, and with
// which keys.
type providerChoice struct {
	realOA, realGM, realAN bool
	oaKey, gmKey, anKey    string
}

// chooseProviders reads -provider and the keys in the environment.
func chooseProviders(mode string) (providerChoice, error) {
	c := providerChoice{oaKey: os.Getenv("OPENAI_API_KEY"), gmKey: os.Getenv("GEMINI_API_KEY"), anKey: os.Getenv("ANTHROPIC_API_KEY")}
	if c.gmKey == "" {
		c.gmKey = os.Getenv("GOOGLE_API_KEY")
	}
	switch mode {
	case "auto":
		c.realOA, c.realGM, c.realAN = c.oaKey != "", c.gmKey != "", c.anKey != ""
	case "fake":
	case "real":
		if c.oaKey == "" || c.gmKey == "" || c.anKey == "" {
			return c, errors.New("-provider real needs OPENAI_API_KEY, GEMINI_API_KEY and ANTHROPIC_API_KEY")
		}
		c.realOA, c.realGM, c.realAN = true, true, true
	default:
		return c, fmt.Errorf("%w: -provider must be auto, fake or real, not %q", errUsage, mode)
	}
	return c, nil
}

// clients are the three SDK clients of the demo's script, the models they
// ask, and where they went.
type clients struct {
	oa      *openai.Client
	oaModel string
	gm      *genai.Client
	gmModel string
	an      anthropic.Client
	anModel string

	// banner says where each client goes, for the demo's first lines.
	banner  string
	servers []*httptest.Server // the fakes started, closed by close
}

// newClients builds the clients over httpClient, starting a fake server
// for each provider not called for real.
func newClients(c providerChoice, httpClient *http.Client) (*clients, error) {
	cl := &clients{}
	fake := func(h http.Handler) string {
		srv := httptest.NewServer(h)
		cl.servers = append(cl.servers, srv)
		return srv.URL
	}

	oaCfg := openai.DefaultConfig(c.oaKey)
	cl.oaModel = envOr("OPENAI_MODEL", openai.GPT4oMini)
	where := "api.openai.com"
	if base := os.Getenv("OPENAI_BASE_URL"); c.realOA && base != "" {
		// The official SDK's variable: a proxy or a compatible server.
		oaCfg.BaseURL, where = base, base
	}
	if !c.realOA {
		url := fake(fakeOpenAI())
		oaCfg = openai.DefaultConfig(fakeOpenAIKey)
		oaCfg.BaseURL = url + "/v1"
		cl.oaModel, where = openai.GPT4oMini, "a fake OpenAI server at "+url
	}
	oaCfg.HTTPClient = httpClient
	cl.oa = openai.NewClientWithConfig(oaCfg)

	gmCfg := &genai.ClientConfig{APIKey: c.gmKey, Backend: genai.BackendGeminiAPI, HTTPClient: httpClient}
	cl.gmModel = envOr("GEMINI_MODEL", "gemini-2.5-flash")
	gwhere := "generativelanguage.googleapis.com"
	if base := os.Getenv("GOOGLE_GEMINI_BASE_URL"); c.realGM && base != "" {
		// genai reads it too; set here so that the banner tells the truth.
		gmCfg.HTTPOptions.BaseURL, gwhere = base, base
	}
	if !c.realGM {
		url := fake(fakeGemini())
		gmCfg.APIKey = fakeGeminiKey
		gmCfg.HTTPOptions.BaseURL = url
		cl.gmModel, gwhere = "gemini-2.5-flash", "a fake Gemini server at "+url
	}
	var err error
	cl.gm, err = genai.NewClient(context.Background(), gmCfg)
	if err != nil {
		cl.close()
		return nil, err
	}

	cl.anModel = envOr("ANTHROPIC_MODEL", defaultClaude)
	awhere := "api.anthropic.com"
	anOpts := []anthropicoption.RequestOption{anthropicoption.WithHTTPClient(httpClient)}
	if c.realAN {
		anOpts = append(anOpts, anthropicoption.WithAPIKey(c.anKey))
		if base := os.Getenv("ANTHROPIC_BASE_URL"); base != "" {
			// The SDK reads it too; set here so that the banner tells the truth.
			anOpts, awhere = append(anOpts, anthropicoption.WithBaseURL(base)), base
		}
	} else {
		url := fake(fakeAnthropic())
		// No credential or endpoint from the environment reaches the fake.
		anOpts = append(anOpts, anthropicoption.WithoutEnvironmentDefaults(),
			anthropicoption.WithAPIKey(fakeAnthropicKey), anthropicoption.WithBaseURL(url))
		cl.anModel, awhere = defaultClaude, "a fake Anthropic server at "+url
	}
	cl.an = anthropic.NewClient(anOpts...)

	cl.banner = fmt.Sprintf("OpenAI: %s (%s)\nGemini: %s (%s)\nClaude: %s (%s)\n",
		where, cl.oaModel, gwhere, cl.gmModel, awhere, cl.anModel)
	return cl, nil
}

// close stops the fake servers.
func (cl *clients) close() {
	for _, s := range cl.servers {
		s.Close()
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
