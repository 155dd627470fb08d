package otelsink_test

import (
	"context"
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

	"github.com/llmhistory/llmhistory/internal/otlptest"
	"github.com/llmhistory/llmhistory/otelsink"
)

// The Collector configuration of docs/opentelemetry.md
// (testdata/collector.yaml) works: every component in it exists in the Collector and takes its
// settings (each unmarshalled into the component's own configuration and
// validated), every pipeline names components that are defined, and its
// OTLP receiver, built from the file, takes what otelsink sends over
// HTTP and gRPC.
func TestCollectorConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "collector.yaml"))
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
		se, _ := exporters(t, c, protocol)
		sink, err := otelsink.New(otelsink.Options{SpanExporter: se})
		require.NoError(t, err)
		require.NoError(t, sink.Append(context.Background(), rec("via-"+protocol)))
		require.NoError(t, sink.Close())
	}
	otlptest.WaitFor(t, "both spans", func() bool { return c.Traces.SpanCount() == 2 })
	assert.Contains(t, c.Spans(t), "via-http")
	assert.Contains(t, c.Spans(t), "via-grpc")
}
