// Command terraform-provider-libvirt serves the libvirt provider to Terraform and OpenTofu.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

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
	matchPluginLogsToCLI(os.LookupEnv, os.Setenv)
	tuneGC()
	defer profileCPU(os.Getenv("LIBVIRT_PROVIDER_CPUPROFILE"))()
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	err := tf6server.Serve(provider.Address, provider.ProtocolServer(version), opts...)
	if err != nil {
		log.Fatal(err)
	}
}
