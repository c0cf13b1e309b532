package acctest

// More procedure numbers of libvirt's remote protocol (remote_protocol.x, stable ABI;
// go-libvirt's generated internal/constants carries the same numbers), for LoseReplyTo.
const (
	// ProcNetworkUpdate is REMOTE_PROC_NETWORK_UPDATE: adding or removing a DHCP host
	// entry (virsh net-update; a cluster machine's address reservation).
	ProcNetworkUpdate = 291
)
