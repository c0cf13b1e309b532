package main

import (
	"maps"
	"testing"
)

func TestMatchPluginLogsToCLI(t *testing.T) {
	off := map[string]string{"TF_LOG_PROVIDER": "OFF", "TF_LOG_SDK": "OFF", "TF_LOG_SDK_PROTO": "OFF", "TF_LOG_SDK_FRAMEWORK": "OFF"}
	all := func(level string) map[string]string {
		m := map[string]string{}
		for k := range off {
			m[k] = level
		}
		return m
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want map[string]string // what is set
	}{
		{"no logging asked for", map[string]string{"HOME": "/root"}, off},
		{"TF_LOG_PROVIDER=off", map[string]string{"TF_LOG_PROVIDER": "off"}, map[string]string{"TF_LOG_SDK": "OFF", "TF_LOG_SDK_PROTO": "OFF", "TF_LOG_SDK_FRAMEWORK": "OFF"}},
		{"TF_LOG_CORE only shows no provider log", map[string]string{"TF_LOG_CORE": "trace"}, off},
		{"TF_LOG_PATH only", map[string]string{"TF_LOG_PATH": "/tmp/tf.log"}, off},
		{"TF_LOG=trace", map[string]string{"TF_LOG": "trace"}, all("TRACE")},
		{"TF_LOG=json is trace", map[string]string{"TF_LOG": "JSON"}, all("TRACE")},
		{"TF_LOG=1 is trace", map[string]string{"TF_LOG": "1"}, all("TRACE")},
		{"TF_LOG=info", map[string]string{"TF_LOG": "info"}, all("INFO")},
		{"TF_LOG_PROVIDER wins over TF_LOG", map[string]string{"TF_LOG": "trace", "TF_LOG_PROVIDER": "warn"},
			map[string]string{"TF_LOG_SDK": "WARN", "TF_LOG_SDK_PROTO": "WARN", "TF_LOG_SDK_FRAMEWORK": "WARN"}},
		{"TF_LOG=off", map[string]string{"TF_LOG": "off"}, off},
		{"TF_LOG_SDK set by the user is kept", map[string]string{"TF_LOG_SDK": "trace"},
			map[string]string{"TF_LOG_PROVIDER": "OFF", "TF_LOG_SDK_PROTO": "OFF", "TF_LOG_SDK_FRAMEWORK": "OFF"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]string{}
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			matchPluginLogsToCLI(lookup, func(k, v string) error { set[k] = v; return nil })
			if !maps.Equal(set, tc.want) {
				t.Fatalf("set %v, want %v", set, tc.want)
			}
		})
	}
}
