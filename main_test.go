package main

import "testing"

func TestQuietSDKLogsUnlessAsked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		quiet   bool
	}{
		{"no logging asked for", []string{"HOME=/root", "PATH=/bin"}, true},
		{"TF_LOG", []string{"TF_LOG=trace"}, false},
		{"TF_LOG_PROVIDER only", []string{"TF_LOG_PROVIDER=debug"}, false},
		{"TF_LOG_PATH only", []string{"TF_LOG_PATH=/tmp/tf.log"}, false},
		{"TF_LOG_SDK set by the user", []string{"TF_LOG_SDK=trace"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]string{}
			quietSDKLogsUnlessAsked(tc.environ, func(k, v string) error { set[k] = v; return nil })
			if tc.quiet != (len(set) > 0) {
				t.Fatalf("set %v, want quiet=%v", set, tc.quiet)
			}
			if tc.quiet && (set["TF_LOG_SDK"] != "OFF" || set["TF_LOG_SDK_FRAMEWORK"] != "OFF" || set["TF_LOG_SDK_PROTO"] != "OFF") {
				t.Fatalf("set %v", set)
			}
		})
	}
}
