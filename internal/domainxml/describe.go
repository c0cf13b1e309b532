package domainxml

import (
	"encoding/xml"
	"maps"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Description: libvirt's <title> and <description>, and the user's tags (kept in the
// provider's metadata record). None of them changes what the guest runs with, so a
// change never restarts: title and description are set on the running domain and its
// definition at once (virDomainSetMetadata, LiveSetMetadata), tags go into the
// definition's record (LiveRedefine; libvirt reads only the definition's).

// Describe is what libvirt_domain says about a domain. nil keeps what the domain has
// (libvirt_clone and libvirt_cluster_machine never set it).
type Describe struct {
	Title       *string
	Description *string
	Tags        map[string]string
}

var describeFamily = family{
	name:     "describe",
	validate: func(*Spec) error { return nil },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		if t := s.Describe.Title; t != nil {
			d.Title = *t
		}
		if t := s.Describe.Description; t != nil {
			d.Description = *t
		}
		return nil // tags: recordFamily
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		// Nothing there reads as nil (same as "", see sameOptString), so that a spec
		// that never set them round-trips.
		title, desc := d.Title, d.Description
		if title != "" {
			p.Spec.Describe.Title = &title
		}
		if desc != "" {
			p.Spec.Describe.Description = &desc
		}
		for _, t := range rec.Tags {
			if p.Spec.Describe.Tags == nil {
				p.Spec.Describe.Tags = map[string]string{}
			}
			p.Spec.Describe.Tags[t.Name] = t.Value
		}
	},
	same: func(a, b Spec) bool {
		x, y := a.Describe, b.Describe
		return sameOptString(x.Title, y.Title) && sameOptString(x.Description, y.Description) &&
			sameTags(x.Tags, y.Tags)
	},
	live: func(old, next Spec, _ *libvirtxml.Domain) ([]LiveOp, string) {
		var ops []LiveOp
		x, y := old.Describe, next.Describe
		if !sameOptString(x.Title, y.Title) {
			ops = append(ops, LiveOp{Kind: LiveSetMetadata, Noun: "title", XML: *y.Title})
		}
		if !sameOptString(x.Description, y.Description) {
			ops = append(ops, LiveOp{Kind: LiveSetMetadata, Noun: "description", XML: *y.Description})
		}
		if !sameTags(x.Tags, y.Tags) {
			ops = append(ops, LiveOp{Kind: LiveRedefine, Noun: "tags"})
		}
		return ops, ""
	},
}

// sameOptString: want nil keeps what is there.
func sameOptString(have, want *string) bool {
	return want == nil || (have != nil && *have == *want) || (have == nil && *want == "")
}

// sameTags: want nil keeps what is there; none and empty are the same.
func sameTags(have, want map[string]string) bool {
	return want == nil || maps.Equal(have, want)
}

// recordTags are s's tags for the record, in name order; keep are the record's tags
// now, kept when s does not set them.
func recordTags(s Spec, keep []recordTag) []recordTag {
	if s.Describe.Tags == nil {
		return keep
	}
	var out []recordTag
	for _, k := range slices.Sorted(maps.Keys(s.Describe.Tags)) {
		out = append(out, recordTag{Name: k, Value: s.Describe.Tags[k]})
	}
	return out
}

type recordTag struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// RecordTags are the tags in a record element as libvirt's virDomainGetMetadata returns
// it (nil when there are none or it does not parse).
func RecordTags(element string) map[string]string {
	var rec record
	if xml.Unmarshal([]byte(element), &rec) != nil || len(rec.Tags) == 0 {
		return nil
	}
	tags := map[string]string{}
	for _, t := range rec.Tags {
		tags[t.Name] = t.Value
	}
	return tags
}
