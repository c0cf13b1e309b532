package domain

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// A family is the provider's side of a domainxml family (see internal/domainxml
// family.go): its part of libvirt_domain's schema and model, and the conversion between
// that model and the family's part of domainxml.Spec. Each lives in a domain_<family>.go
// file with its model struct, which Model embeds; the schema, specFromModel,
// resolve, fromSpec, ValidateConfig and fillUnknowns go through families. Adding a device family
// to libvirt_domain is that file (and its embed and list line) plus the domainxml one.
type family struct {
	// group is the v3 group (groups.go) that holds the family's attributes and
	// blocks; "" puts them at the top level.
	group      string
	attributes map[string]schema.Attribute
	blocks     map[string]schema.Block
	// toSpec writes what m asks of the family into s; unknown values read as empty, so
	// that Classify sees them as changes.
	toSpec func(m *Model, s *domainxml.Spec)
	// resolve turns the user's references in s into what the XML needs (volume paths and
	// formats) and checks what must exist (networks). Optional.
	resolve func(ctx context.Context, c *libvirt.Client, s *domainxml.Spec) error
	// fromSpec sets the family's part of m from what libvirt has (s), reconciled with
	// prior so that what the user wrote stays as written.
	fromSpec func(s domainxml.Spec, prior, m *Model)
	// validate checks the family's part of a configuration what its attributes' own
	// validators cannot (values that must differ, settings that go together). Optional.
	validate func(m *Model, diags *diag.Diagnostics)
	// fillUnknowns makes the family's part of a plan storable as state when the domain
	// could not be read back. Optional.
	fillUnknowns func(m *Model)
}
