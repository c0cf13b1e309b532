package domain

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// Defaults.
const (
	defaultShutdownTimeout = "1m"
	defaultWaitTimeout     = 5 * time.Minute
	defaultWaitSource      = "any"
)

// Model is libvirt_domain: its identity, power and lifecycle here, and one
// embedded model per family (family.go).
type Model struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	UUID      types.String `tfsdk:"uuid"`
	Type      types.String `tfsdk:"type"`
	Autostart types.Bool   `tfsdk:"autostart"`
	Running   types.Bool   `tfsdk:"running"`
	domainSizingModel
	domainPlatformModel
	domainMemoryModel
	domainDisksModel
	domainNICsModel
	domainHostdevsModel
	domainFilesystemsModel
	domainGraphicsModel
	domainAgentModel
	domainIgnitionModel
	domainDeviceXMLModel
	domainExtraXMLModel
	domainDescribeModel
	domainFeaturesModel
	domainReadyModel
	groupsModel                       // os, cpu, events, devices, qemu: groups.go
	domainMigrateModel                // migrate, migration: migrate.go
	Shutdown           *shutdownModel `tfsdk:"shutdown"`
	State              types.String   `tfsdk:"state"`
	ConsoleURL         types.String   `tfsdk:"console_url"`
	UpdateMethod       types.String   `tfsdk:"update_method"`
	// restart_on_update and pending_restart: pending.go.
	RestartOnUpdate types.Bool `tfsdk:"restart_on_update"`
	PendingRestart  types.Bool `tfsdk:"pending_restart"`
	// stamp is what the read that made this model saw (stamp.go).
	stamp string
}

type shutdownModel struct {
	Timeout types.String `tfsdk:"timeout"`
}

var (
	shutdownAttrTypes = map[string]attr.Type{"timeout": types.StringType}
)
