package libvirt

import "regexp"

// libvirtxml (v1.12008.0) writes a USB hostdev's <source> as <product> then <vendor>
// (its struct's field order), but libvirt's domain schema wants <vendor> first, so a
// define with validation fails: "Extra element devices in interleave". vendorFirst swaps
// the pair in libvirtxml's own output before it goes to libvirt. The ids in it are the
// hex ids domainxml wrote (no markup can hide in them); drop this when libvirtxml orders
// them itself.
var productThenVendor = regexp.MustCompile(`(<product id="[^"<>]*"></product>)(\s*)(<vendor id="[^"<>]*"></vendor>)`)

func vendorFirst(xml string) string { return productThenVendor.ReplaceAllString(xml, "$3$2$1") }
