package domain

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// iotuneModel is a disk's `iotune` (domainxml/iotune.go owns the XML and the rules;
// disk_tuning.go has the attributes and the conversions).
type iotuneModel struct {
	TotalBytesSec    types.Int64  `tfsdk:"total_bytes_sec"`
	ReadBytesSec     types.Int64  `tfsdk:"read_bytes_sec"`
	WriteBytesSec    types.Int64  `tfsdk:"write_bytes_sec"`
	TotalIopsSec     types.Int64  `tfsdk:"total_iops_sec"`
	ReadIopsSec      types.Int64  `tfsdk:"read_iops_sec"`
	WriteIopsSec     types.Int64  `tfsdk:"write_iops_sec"`
	TotalBytesSecMax types.Int64  `tfsdk:"total_bytes_sec_max"`
	ReadBytesSecMax  types.Int64  `tfsdk:"read_bytes_sec_max"`
	WriteBytesSecMax types.Int64  `tfsdk:"write_bytes_sec_max"`
	TotalIopsSecMax  types.Int64  `tfsdk:"total_iops_sec_max"`
	ReadIopsSecMax   types.Int64  `tfsdk:"read_iops_sec_max"`
	WriteIopsSecMax  types.Int64  `tfsdk:"write_iops_sec_max"`
	GroupName        types.String `tfsdk:"group_name"`
	SizeIopsSec      types.Int64  `tfsdk:"size_iops_sec"`
}

func (i *iotuneModel) values() []attr.Value {
	return []attr.Value{i.TotalBytesSec, i.ReadBytesSec, i.WriteBytesSec, i.TotalIopsSec, i.ReadIopsSec, i.WriteIopsSec,
		i.TotalBytesSecMax, i.ReadBytesSecMax, i.WriteBytesSecMax, i.TotalIopsSecMax, i.ReadIopsSecMax, i.WriteIopsSecMax, i.GroupName, i.SizeIopsSec}
}

// hasLimit says a limit is set (group_name is not one).
func (i *iotuneModel) hasLimit() bool {
	for _, v := range i.values()[:12] {
		if !v.IsNull() {
			return true
		}
	}
	return false
}
