package domain

import (
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// families in schema order; Model, or its family's group, embeds one model
// per entry.
var families = []family{
	domainSizing,
	domainIOThreads,
	domainPlatform,
	domainMachine,
	domainCPUMode,
	domainArch,
	domainCPU,
	domainMemory,
	domainDisks,
	domainNICs,
	domainHostdevs,
	domainFilesystems,
	domainGraphics,
	domainGuestDevices,
	domainAgent,
	domainChardevs,
	domainIgnition,
	domainDeviceXML,
	domainExtraXML,
	domainQEMU,
	domainDescribe,
	domainEvents,
	domainFeatures,
	domainBoot,
	domainKernel,
	domainSMBIOS,
	domainSecureBoot,
	domainLoader,
	domainTPM,
	domainReady,
}

// withFamilies adds every top-level family's attributes and blocks to a schema's, and
// the groups that hold the others.
func withFamilies(attrs map[string]schema.Attribute, blocks map[string]schema.Block) (map[string]schema.Attribute, map[string]schema.Block) {
	for _, f := range families {
		if f.group == "" {
			maps.Copy(attrs, f.attributes)
			maps.Copy(blocks, f.blocks)
		}
	}
	maps.Copy(attrs, domainGroupAttributes())
	return attrs, blocks
}
