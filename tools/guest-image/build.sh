#!/bin/bash
# Build the tiny test guest image (see README.md beside this file).
#
# Prints, as the last line on stdout, the absolute path of the qcow2; all
# progress goes to stderr. The image is cached by a hash over this script, the
# files under overlay/ and the exact versions of the Debian packages it is made
# of, at ${KVMFORGE_CACHE:-/var/cache/kvmforge}/guest-image/<hash>/tiny.qcow2,
# with the stable symlink .../guest-image/tiny.qcow2 pointing at the newest.
# Needs root (apt-get) on Debian 12.
set -euo pipefail
exec 3>&1 1>&2

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${KVMFORGE_CACHE:-/var/cache/kvmforge}
GI=$CACHE_ROOT/guest-image
KEEP_BUILDS=3
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

# Debian packages taken from the host (the kernel package is only downloaded).
PKGS=(busybox-static syslinux syslinux-common mtools dosfstools cpio genisoimage
	qemu-guest-agent qemu-utils xz-utils zstd)
# Kernel modules to load in the guest; their dependencies are added.
MODULES=(virtio_pci virtio_net virtio_blk virtio_console virtio_scsi virtio_balloon
	ahci ata_piix sr_mod sd_mod isofs button evdev e1000 e1000e
	9pnet_virtio 9p virtiofs qemu_fw_cfg tpm_crb tpm_tis
	loop ext4 crc32c_generic) # a filesystem qemu-ga can freeze (rcS); ext4 needs crc32c
CMDLINE="console=tty0 console=ttyS0,115200n8 quiet no_timer_check mitigations=off"

T_START=$EPOCHREALTIME
log() { # with the seconds since the start
	local us=$((${EPOCHREALTIME/./} - ${T_START/./}))
	printf 'guest-image: [%d.%01ds] %s\n' $((us / 1000000)) $((us / 100000 % 10)) "$*" >&2
}
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"

# --- apt, waiting politely for other apt/dpkg runs ---------------------------------
apt_busy() { # is any apt/dpkg lock file held (POSIX lock in /proc/locks)?
	local f ino
	for f in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock \
		/var/cache/apt/archives/lock; do
		[ -e "$f" ] || continue
		ino=$(stat -c %i "$f")
		if awk -v ino="$ino" '{ for (i = 1; i <= NF; i++) if ($i ~ (":" ino "$")) f = 1 }
			END { exit !f }' /proc/locks; then
			return 0
		fi
	done
	return 1
}
apt_wait() {
	local waited=0
	while apt_busy; do
		if [ $((waited % 30)) = 0 ]; then log "apt/dpkg is busy (another apt-get?), waiting"; fi
		sleep 2
		waited=$((waited + 2))
		[ $waited -lt 1800 ] || die "apt/dpkg still busy after 30 minutes"
	done
}
apt_run() { # apt-get ARGS..., retried while another apt holds the locks
	local try
	for try in 1 2 3 4 5 6 7 8 9 10; do
		apt_wait
		if apt-get -q -o DPkg::Lock::Timeout=600 "$@" >&2; then return 0; fi
		apt_busy || [ $try -lt 3 ] || return 1
		sleep 3
	done
	return 1
}
UPDATED=0
apt_update() {
	[ $UPDATED = 1 ] && return 0
	log "apt-get update"
	apt_run update
	UPDATED=1
}

ensure_packages() {
	local p missing=()
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qx 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	log "installing ${missing[*]}"
	apt_update
	apt_run install -y --no-install-recommends "${missing[@]}" || die "apt-get install failed"
}

# --- inputs and their hash ----------------------------------------------------------
kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ && !f { print $2; f = 1 }'
}
qga_libs() { # the libraries and the loader qemu-ga needs
	ldd /usr/sbin/qemu-ga | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'
}
lists_key() { # changes whenever apt's package lists do
	stat -c '%n %s %Y' /var/lib/apt/lists/*Packages* 2>/dev/null | sha256sum | cut -c1-32
}
resolve_kernel() {
	# apt-cache takes seconds here (no pkgcache.bin), so remember the answer
	# for as long as the package lists stay the same
	local memo=$GI/.kernel-resolved key
	key=$(lists_key)
	if [ -f "$memo" ] && read -r k KPKG KVERSION < "$memo" && [ "$k" = "$key" ] &&
		[ -n "$KPKG" ] && [ -n "$KVERSION" ]; then
		return 0
	fi
	KPKG=$(kernel_pkg)
	if [ -z "$KPKG" ]; then apt_update; KPKG=$(kernel_pkg); key=$(lists_key); fi
	[ -n "$KPKG" ] || die "cannot find the kernel package (apt-cache depends linux-image-amd64)"
	KVERSION=$(apt-cache policy "$KPKG" | awk '$1 == "Candidate:" { print $2 }')
	[ -n "$KVERSION" ] && [ "$KVERSION" != "(none)" ] || die "no candidate version of $KPKG"
	echo "$key $KPKG $KVERSION" > "$memo.$$" && mv "$memo.$$" "$memo"
}
resolve_inputs() {
	resolve_kernel
	KREL=${KPKG#linux-image-}

	# packages owning qemu-ga's libraries (dpkg knows some under /usr only)
	local l r cands=() libpkgs
	for l in $(qga_libs); do
		r=$(readlink -f "$l")
		cands+=("$l" "$r" "/usr$l" "/usr$r")
	done
	libpkgs=$(dpkg -S "${cands[@]}" 2>/dev/null | sed -n 's/^\([^:, ]*\(:[a-z0-9]*\)\?\): .*/\1/p' | sort -u || true)
	# shellcheck disable=SC2086
	VERSIONS=$({
		echo "kernel $KPKG $KVERSION"
		dpkg-query -W -f='${Package}:${Architecture} ${Version}\n' \
			busybox-static qemu-guest-agent syslinux syslinux-common $libpkgs
	} | sort -u)
	FILES=$(cd "$HERE" && find build.sh overlay -type f -print0 | sort -z | xargs -0 sha256sum)
	HASH=$(printf '%s\n--\n%s\n--\n%s\n%s\n' "$VERSIONS" "$FILES" "${MODULES[*]}" "$CMDLINE" |
		sha256sum | cut -c1-16)
	OUT=$GI/$HASH
}

publish_link() { # point the stable symlink at OUT (atomically)
	ln -sfn "$HASH/tiny.qcow2" "$GI/.tiny.qcow2.$$"
	mv -T "$GI/.tiny.qcow2.$$" "$GI/tiny.qcow2"
}
cache_hit() {
	[ -f "$OUT/tiny.qcow2" ] || return 1
	[ "$(readlink "$GI/tiny.qcow2" 2>/dev/null)" = "$HASH/tiny.qcow2" ] || publish_link
	log "cached: $OUT"
	echo "$OUT/tiny.qcow2" >&3
	exit 0
}

mkdir -p "$GI"
GI=$(cd "$GI" && pwd -P)
ensure_packages
resolve_inputs
log "inputs hash $HASH"
cache_hit || :

# --- cold build (serialised; rebuilt in a temp dir, then renamed) ----------------------
exec 9>"$GI/.lock"
if ! flock -n 9; then
	log "another build holds $GI/.lock, waiting"
	flock 9
fi
cache_hit || :
rm -rf "$GI"/.build.* "$GI"/.tiny.qcow2.*
TMP=$(mktemp -d "$GI/.build.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
log "building $HASH in $TMP"

# kernel package: downloaded (not installed), kept in the cache for rebuilds
DEBS=$GI/debs
mkdir -p "$DEBS"
DEB=$DEBS/${KPKG}_${KVERSION//:/%3a}_amd64.deb
if [ ! -f "$DEB" ]; then
	log "downloading $KPKG $KVERSION"
	mkdir -p "$TMP/dl"
	if ! (cd "$TMP/dl" && apt-get -q -o APT::Sandbox::User=root download "$KPKG=$KVERSION" >&2); then
		apt_update
		resolve_inputs
		cache_hit || :
		DEB=$DEBS/${KPKG}_${KVERSION//:/%3a}_amd64.deb
		(cd "$TMP/dl" && apt-get -q -o APT::Sandbox::User=root download "$KPKG=$KVERSION" >&2) ||
			die "cannot download $KPKG"
	fi
	find "$DEBS" -name 'linux-image-*.deb' -delete
	mv "$TMP"/dl/*.deb "$DEB"
fi
log "extracting $DEB"
mkdir -p "$TMP/k"
# (big module trees a tiny virtual guest never needs are skipped: less to write
# and delete; a wanted module missing because of this fails the build below)
skip=()
for d in sound drivers/gpu drivers/media drivers/net/wireless drivers/infiniband \
	drivers/iio drivers/staging drivers/usb drivers/hwmon drivers/md drivers/hid \
	drivers/video drivers/bluetooth net/bluetooth net/mac80211 net/wireless fs/btrfs \
	fs/xfs fs/ocfs2 fs/f2fs fs/gfs2 fs/nfs fs/nfsd fs/smb fs/ceph; do
	skip+=(--exclude "./lib/modules/*/kernel/$d")
done
dpkg-deb --fsys-tarfile "$DEB" |
	tar -x -C "$TMP/k" --wildcards "${skip[@]}" './boot/vmlinuz-*' './lib/modules/*'
VMLINUZ=$TMP/k/boot/vmlinuz-$KREL
MODDIR=$TMP/k/lib/modules/$KREL
[ -f "$VMLINUZ" ] && [ -d "$MODDIR" ] || die "unexpected layout in $DEB"

# --- root filesystem (becomes the initramfs) -------------------------------------------
R=$TMP/root
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,lib/modules,lib64,dev,proc,sys,run,tmp,root,etc,var/log}
ln -s ../run "$R/var/run"

# busybox and its applets as relative symlinks
cp /bin/busybox "$R/bin/busybox"
/bin/busybox --list-full | while read -r a; do
	case "$a" in linuxrc|bin/busybox) continue ;; esac
	dir=${a%/*}
	[ "$dir" = "$a" ] && dir=.
	mkdir -p "$R/$dir"
	rel=$(realpath -s -m --relative-to="/$dir" /bin/busybox)
	ln -sf "$rel" "$R/$a"
done

# qemu-ga, its libraries and the dynamic loader, at the same paths
install -D -m 0755 /usr/sbin/qemu-ga "$R/usr/sbin/qemu-ga"
for l in $(qga_libs); do
	install -D -m 0755 "$(readlink -f "$l")" "$R$l"
done

# kernel modules in dependency order: /lib/modules/NAME.ko + load-order
declare -A MODPATH=() SEEN=()
while IFS= read -r -d '' f; do
	b=${f##*/}
	b=${b%.ko}
	MODPATH[${b//-/_}]=$f
done < <(find "$MODDIR/kernel" -name '*.ko' -print0)
ORDER=()
visit() {
	local m=${1//-/_} f deps d
	[ -n "${SEEN[$m]:-}" ] && return 0
	SEEN[$m]=1
	f=${MODPATH[$m]:-}
	if [ -z "$f" ]; then
		grep -q "/${1}.ko\$\|/${m}.ko\$" "$MODDIR/modules.builtin" ||
			die "kernel module $1 not found in $DEB"
		return 0
	fi
	deps=$(tr '\0' '\n' < "$f" | sed -n 's/^depends=//p' | head -n 1)
	for d in ${deps//,/ }; do visit "$d"; done
	ORDER+=("$m")
	cp "$f" "$R/lib/modules/$m.ko"
}
for m in "${MODULES[@]}"; do visit "$m"; done
printf '%s\n' "${ORDER[@]}" > "$R/lib/modules/load-order"
log "modules: ${ORDER[*]}"

# our files; anything starting with #! is executable
cp -a "$HERE/overlay/." "$R/"
find "$R/etc" "$R/usr/libexec" "$R/usr/share/udhcpc" "$R/sbin" "$R/init" -type f | while read -r f; do
	if [ "$(head -c 2 "$f")" = '#!' ]; then chmod 0755 "$f"; else chmod 0644 "$f"; fi
done
# sanity: no dangling links, and qemu-ga finds all its libraries in the root
dangling=$(find "$R" -xtype l | sed "s|^$R||" | head -n 5)
[ -z "$dangling" ] || die "dangling symlinks in the guest root: $dangling"
chroot "$R" /usr/sbin/qemu-ga --version >/dev/null || die "qemu-ga does not run in the guest root"
printf '%s\n' "$VERSIONS" > "$R/etc/tinyguest-versions"
echo "$HASH" > "$R/etc/tinyguest-build"

# --- initramfs, FAT disk with syslinux, qcow2 ---------------------------------------------
log "packing initramfs and disk"
mkdir -p "$TMP/out" "$TMP/boot"
(cd "$R" && find . -print0 | sort -z | cpio --null -o -H newc -R 0:0 --quiet) |
	zstd -q -19 -T2 > "$TMP/boot/initrd.img" # decompresses ~4x faster than xz under TCG
cp "$VMLINUZ" "$TMP/boot/vmlinuz"
cat > "$TMP/boot/syslinux.cfg" <<EOF
SERIAL 0 115200
DEFAULT tiny
PROMPT 0
TIMEOUT 0
LABEL tiny
  LINUX /vmlinuz
  INITRD /initrd.img
  APPEND $CMDLINE
EOF
bytes=$(du -cb "$TMP"/boot/* | awk 'END { print $1 }')
kib=$(((bytes / 1024 + 2048 + 1023) / 1024 * 1024)) # + 2 MiB, whole MiB
mkfs.vfat -C -n TINYGUEST "$TMP/disk.raw" "$kib" >/dev/null
mcopy -i "$TMP/disk.raw" "$TMP/boot/vmlinuz" "$TMP/boot/initrd.img" "$TMP/boot/syslinux.cfg" ::
syslinux --install "$TMP/disk.raw"
qemu-img convert -f raw -O qcow2 "$TMP/disk.raw" "$TMP/out/tiny.qcow2"
cp "$TMP/boot/vmlinuz" "$TMP/boot/initrd.img" "$TMP/out/"
# The uncompressed kernel (ELF with a PVH entry): for direct kernel boot
# (qemu -kernel, libvirt <os><kernel>) it skips the xz decompression that takes
# most of the boot time under TCG.
for off in $(LC_ALL=C grep -obUa $'\xfd''7zXZ' "$VMLINUZ" | cut -d: -f1); do
	tail -c +$((off + 1)) "$VMLINUZ" | xz -dc --single-stream > "$TMP/out/vmlinux" 2>/dev/null || true
	[ "$(head -c 4 "$TMP/out/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ] && break
	rm -f "$TMP/out/vmlinux"
done
[ -f "$TMP/out/vmlinux" ] || log "warning: could not extract vmlinux from $VMLINUZ"
echo "$CMDLINE" > "$TMP/out/cmdline"
printf '%s\n--\n%s\n' "$VERSIONS" "$FILES" > "$TMP/out/manifest"
chmod 0644 "$TMP"/out/*
chmod 0755 "$TMP/out"
sync -f "$TMP/out/tiny.qcow2" 2>/dev/null || sync

mv -T "$TMP/out" "$OUT"
publish_link

# keep the newest few builds
{ ls -1dt "$GI"/*/ | grep -E '/[0-9a-f]{16}/$' || true; } | tail -n +$((KEEP_BUILDS + 1)) |
	while read -r d; do
		[ "${d%/}" = "$OUT" ] || rm -rf "$d"
	done

log "built $OUT" \
	"(qcow2 $(du -h "$OUT/tiny.qcow2" | cut -f1), initrd $(du -h "$OUT/initrd.img" | cut -f1))"
echo "$OUT/tiny.qcow2" >&3
