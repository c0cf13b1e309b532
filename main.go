// Command terraform-provider-libvirt serves the libvirt provider to Terraform and OpenTofu.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

// Generate the registry docs (templates/ + examples/ + schema) without network access.
//go:generate go run ./tools/docs

// version is set at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"

func main() {
	var debug, showVersion bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve (prints TF_REATTACH_PROVIDERS)")
	flag.BoolVar(&showVersion, "version", false, "print the version and exit")
	flag.Parse()
	if showVersion {
		fmt.Println(version)
		os.Exit(0)
	}
	quietSDKLogsUnlessAsked(os.Environ(), os.Setenv)
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         provider.Address,
		Debug:           debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// quietSDKLogsUnlessAsked turns the plugin SDK's own logging off when the user asked for
// no logs at all (no TF_LOG* variable). Terraform and OpenTofu then discard what a plugin
// logs, but terraform-plugin-go and the framework still build every TRACE entry for each
// RPC: about 35% of the provider's CPU in a 50-domain plan, 30% of its wall time (make
// bench). Any TF_LOG* setting leaves everything as the user set it.
func quietSDKLogsUnlessAsked(environ []string, setenv func(key, value string) error) {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "TF_LOG") {
			return
		}
	}
	for _, key := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		_ = setenv(key, "OFF")
	}
}
