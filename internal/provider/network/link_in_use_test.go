package network

import (
	"reflect"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Only links leaving the pool count, and only when a port is on them.
func TestUsedRemovedLinks(t *testing.T) {
	ports := []libvirt.NetworkPort{{Owner: "web", Link: "eth1"}, {Owner: "db", Link: "eth1"}, {Owner: "web", Link: "eth1"},
		{Owner: "cache", Link: "eth2"}, {Owner: "bridged"}}
	for _, tc := range []struct {
		name       string
		have, want []string
		used       []linkUse
	}{
		{"nothing removed", []string{"eth1", "eth2"}, []string{"eth2", "eth1", "eth3"}, nil},
		{"removed, unused", []string{"eth1", "eth2", "eth3"}, []string{"eth1", "eth2"}, nil},
		{"removed, used", []string{"eth1", "eth2"}, []string{"eth2"}, []linkUse{{"eth1", []string{"db", "web"}}}},
		{"pool gone", []string{"eth1", "eth2"}, nil, []linkUse{{"eth1", []string{"db", "web"}}, {"eth2", []string{"cache"}}}},
	} {
		if got := usedRemovedLinks(tc.have, tc.want, ports); !reflect.DeepEqual(got, tc.used) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.used)
		}
	}
}
