package libvirt

import (
	"context"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// VolumeUser is a running domain that has a volume open as one of its disks.
type VolumeUser struct {
	Domain golibvirt.Domain
	Target string // the disk's target dev, e.g. vdb
}

// GrowResult says how a volume was grown.
type GrowResult struct {
	Online   bool   // through a running domain (block resize) rather than on the host
	Domain   string // that domain's name
	Target   string
	GuestLog string   // what the in-guest grow printed, when it ran
	Warnings []string // best-effort steps that failed (the grow itself succeeded)
}

// RunningUserOf finds a running domain whose live definition has path as a disk source
// (a file, or a block device). nil when no running domain uses it.
func RunningUserOf(l *golibvirt.Libvirt, info *VolumeInfo) (*VolumeUser, error) {
	doms, _, err := l.ConnectListAllDomains(1, golibvirt.ConnectListDomainsActive)
	if err != nil {
		return nil, err
	}
	for _, d := range doms {
		doc, err := l.DomainGetXMLDesc(d, 0)
		if err != nil {
			if HasCode(classify("", "", err), golibvirt.ErrNoDomain) {
				continue // it stopped and went away meanwhile
			}
			return nil, err
		}
		var x libvirtxml.Domain
		if err := x.Unmarshal(doc); err != nil {
			return nil, fmt.Errorf("parse live XML of domain %s: %w", d.Name, err)
		}
		if x.Devices == nil {
			continue
		}
		for _, disk := range x.Devices.Disks {
			if disk.Source == nil || disk.Target == nil {
				continue
			}
			s := disk.Source
			switch {
			case s.File != nil && s.File.File == info.Path,
				s.Block != nil && s.Block.Dev == info.Path,
				s.Volume != nil && s.Volume.Pool == info.Pool && s.Volume.Volume == info.Name:
				return &VolumeUser{Domain: d, Target: disk.Target.Dev}, nil
			}
		}
	}
	return nil, nil
}

// GrowVolume grows a volume to capacity bytes. When a running domain uses it, the grow
// goes through that domain (block resize: QEMU resizes the image it holds open and the
// guest sees the new size at once), followed by a best-effort grow of the partition and
// filesystem inside the guest through the QEMU guest agent; a failure there is a warning
// in the result, not an error. Otherwise the volume is resized on the host.
// Shrinking is refused.
func (c *Client) GrowVolume(ctx context.Context, ref VolumeRef, capacity uint64) (*GrowResult, error) {
	var info *VolumeInfo
	var user *VolumeUser
	err := c.Read(ctx, "find the users of volume "+ref.String(), func(l *golibvirt.Libvirt) error {
		v, err := LookupVolume(l, ref)
		if err != nil {
			return err
		}
		if info, err = volumeInfo(l, v); err != nil {
			return err
		}
		user, err = RunningUserOf(l, info)
		return err
	})
	if err != nil {
		return nil, err
	}
	if capacity < info.Capacity {
		return nil, fmt.Errorf("volume %s/%s is %d bytes: it cannot shrink to %d bytes", info.Pool, info.Name, info.Capacity, capacity)
	}
	res := &GrowResult{}
	if capacity == info.Capacity {
		return res, nil
	}
	if user == nil {
		err := c.Write(ctx, fmt.Sprintf("resize volume %s/%s to %d bytes", info.Pool, info.Name, capacity), func(l *golibvirt.Libvirt) error {
			v, err := LookupVolume(l, VolumeRef{Key: info.Key})
			if err != nil {
				return err
			}
			return l.StorageVolResize(v, capacity, 0)
		})
		return res, err
	}
	res.Online, res.Domain, res.Target = true, user.Domain.Name, user.Target
	err = c.Write(ctx, fmt.Sprintf("block resize disk %s of running domain %s to %d bytes", user.Target, user.Domain.Name, capacity), func(l *golibvirt.Libvirt) error {
		return l.DomainBlockResize(user.Domain, user.Target, capacity, golibvirt.DomainBlockResizeBytes)
	})
	if err != nil {
		return nil, err
	}
	out, err := c.GuestGrowFilesystem(ctx, user.Domain, user.Target)
	res.GuestLog = out
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"The disk %s of domain %s was grown to %d bytes, but growing its partition and filesystem inside the guest did not work: %v. "+
				"Grow them in the guest (e.g. growpart + resize2fs or xfs_growfs), or install and run qemu-guest-agent to have it done.",
			user.Target, user.Domain.Name, capacity, err))
	}
	return res, nil
}

// guestGrowScript grows, inside the guest, the last partition of /dev/<target> (growpart)
// and the filesystem on it or on the whole disk (resize2fs, xfs_growfs). The guest's name
// for the disk is assumed to be the target's, as virtio disks usually are.
const guestGrowScript = `t="$1"; d="/dev/$t"
[ -b "$d" ] || { echo "no block device $d in the guest"; exit 10; }
part=""
for p in "$d"[0-9]* "$d"p[0-9]*; do [ -b "$p" ] && part="$p"; done
fs="$d"
if [ -n "$part" ]; then
  n=$(echo "$part" | sed 's/.*[^0-9]//')
  command -v growpart >/dev/null 2>&1 || { echo "growpart is not installed in the guest"; exit 11; }
  growpart "$d" "$n"; rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 1 ] || { echo "growpart $d $n failed ($rc)"; exit 12; }
  fs="$part"
fi
mnt=$(awk -v d="$fs" '$1==d {print $2; exit}' /proc/mounts)
type=$(awk -v d="$fs" '$1==d {print $3; exit}' /proc/mounts)
[ -n "$mnt" ] || { echo "$fs is not mounted: no filesystem to grow"; exit 0; }
case "$type" in
  ext2|ext3|ext4) resize2fs "$fs" ;;
  xfs) xfs_growfs "$mnt" ;;
  *) echo "filesystem $type on $fs: no online grow known"; exit 13 ;;
esac
`

// GuestGrowFilesystem runs guestGrowScript in the guest through the QEMU guest agent
// and returns what it printed.
func (c *Client) GuestGrowFilesystem(ctx context.Context, dom golibvirt.Domain, target string) (string, error) {
	out, code, err := c.GuestExec(ctx, dom, "/bin/sh", "-c", guestGrowScript, "grow", target)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return out, fmt.Errorf("in-guest grow exited %d: %s", code, out)
	}
	return out, nil
}
