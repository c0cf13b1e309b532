package acctest

import (
	"fmt"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// BlockIOTune is what `virsh blkdeviotune <name> <target>` prints for a running domain:
// the disk's I/O limits as QEMU applies them now, by parameter name (total_bytes_sec,
// ..., group_name as a string in Group).
type BlockIOTune struct {
	Limits map[string]uint64
	Group  string
}

// GetBlockIOTune reads the live I/O limits of the disk on target of the named domain.
func GetBlockIOTune(t testing.TB, name, target string) (*BlockIOTune, error) {
	out := &BlockIOTune{Limits: map[string]uint64{}}
	err := Client(t).Read(Ctx(t), "read the iotune of domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		// Without TypedParamStringOkay libvirt leaves out the string parameter (group_name).
		flags := uint32(golibvirt.DomainAffectLive) | uint32(golibvirt.TypedParamStringOkay)
		_, n, err := l.DomainGetBlockIOTune(d, golibvirt.OptString{target}, 0, flags) // how many parameters there are
		if err != nil {
			return err
		}
		params, _, err := l.DomainGetBlockIOTune(d, golibvirt.OptString{target}, n, flags)
		if err != nil {
			return err
		}
		for _, p := range params {
			if v, ok := p.Value.I.(uint64); ok {
				out.Limits[p.Field] = v
			} else if p.Field == golibvirt.DomainBlockIotuneGroupName {
				out.Group = fmt.Sprint(p.Value.I)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blkdeviotune %s %s: %w", name, target, err)
	}
	return out, nil
}
