package main

import "strings"

// pluginLogLevels are the variables that set the level of what the plugin itself logs:
// its own tflog entries and those of terraform-plugin-go and the framework. Unset, each
// of them means TRACE.
var pluginLogLevels = []string{"TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"}

// matchPluginLogsToCLI sets every plugin log level the user left unset to the level at
// which Terraform or OpenTofu will show provider logs at all, so that the plugin builds
// no entry the CLI throws away. terraform-plugin-go and the framework otherwise build a
// TRACE entry for every RPC and attribute step whatever the CLI shows: in a plan of 50
// domains that was about 35% of the provider's CPU, and it came back with any TF_LOG*
// variable, even TF_LOG_PROVIDER=off or TF_LOG_CORE=trace alone, which show no provider
// log. A level the user set explicitly is left as it is.
func matchPluginLogsToCLI(lookup func(string) (string, bool), setenv func(key, value string) error) {
	level := cliProviderLogLevel(lookup)
	for _, key := range pluginLogLevels {
		if v, ok := lookup(key); ok && v != "" {
			continue
		}
		_ = setenv(key, level)
	}
}

// cliProviderLogLevel is the level at which the CLI passes provider logs on, by its own
// rules: TF_LOG_PROVIDER, else TF_LOG; unset means OFF, JSON means TRACE, and any other
// word that is not a level name means TRACE (TF_LOG=1 logs everything).
func cliProviderLogLevel(lookup func(string) (string, bool)) string {
	v, _ := lookup("TF_LOG_PROVIDER")
	if v == "" {
		v, _ = lookup("TF_LOG")
	}
	switch v = strings.ToUpper(strings.TrimSpace(v)); v {
	case "":
		return "OFF"
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF":
		return v
	default:
		return "TRACE"
	}
}
