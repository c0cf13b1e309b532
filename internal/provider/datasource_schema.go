package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
)

// dataSchema is a data source's schema: its attributes and the timeouts block (read)
// every data source has.
func dataSchema(ctx context.Context, desc string, attrs map[string]schema.Attribute) schema.Schema {
	return schema.Schema{MarkdownDescription: desc, Attributes: attrs, Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx)}}
}

// dataKey is a string that may pick the object to look up (one of several such keys) and
// is filled in from the object found when another one did.
func dataKey(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true}
}
