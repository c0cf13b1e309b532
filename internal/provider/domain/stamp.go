package domain

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// A read stamp says what a full read of a domain saw, for the refresh shortcut
// (internal/provider/server_read.go): the provider's code, the domain's state and
// autostart flag and its persistent definition. Only a stopped domain gets one: a running one's state also holds
// what its guest reports (addresses, the console port), which a refresh must look at.
// Neither does a domain whose disks log in with a secret named by usage, which a read
// resolves through another object.
type ReadStamp struct {
	ID    string `json:"id"`
	Stamp string `json:"stamp"`
}

// ReadStampKey is the key of the read stamp in libvirt_domain's private state.
const ReadStampKey = "read_stamp"

// StampOf is the stamp of what st shows, "" where none may be taken: a read of a domain
// whose disks log in with a secret named by usage (secretByUsage) takes none.
func StampOf(st *libvirt.DomainStatus, secretByUsage bool) string {
	if st == nil || st.Active || secretByUsage {
		return ""
	}
	h := sha256.New()
	for _, s := range []string{codeToken(), st.State, strconv.FormatBool(st.Autostart), st.XML} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// codeToken names the provider's code: its version when that names one build (a
// release, or `git describe` of a clean tree), else something new in every process, so
// that a state read by other code never passes for this code's. CodeTokenEnv overrides
// it (the acceptance tests name a build of a work tree that way).
var codeToken = sync.OnceValue(func() string {
	if t := os.Getenv(CodeTokenEnv); t != "" {
		return "env-" + t
	}
	v := buildVersion.Load()
	if v != nil && *v != "" && *v != "dev" && *v != "test" && !strings.HasSuffix(*v, "-dirty") {
		return "version-" + *v
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "process-" + hex.EncodeToString(b)
})

// buildVersion is the version the protocol server was made with (SetBuildVersion).
var buildVersion atomic.Pointer[string]

// SetBuildVersion names the provider's build for the read stamps: the provider's
// protocol server calls it with its version. The first call wins.
func SetBuildVersion(version string) { buildVersion.CompareAndSwap(nil, &version) }

// CodeTokenEnv names the provider's code for the refresh shortcut when its build does not.
const CodeTokenEnv = "LIBVIRT_PROVIDER_CODE_TOKEN" //nolint:gosec // an environment variable's name, not a credential

// keepReadStamp writes m's read stamp into a resource's private state, or removes the
// one there when m has none.
func keepReadStamp(ctx context.Context, private interface {
	SetKey(context.Context, string, []byte) diag.Diagnostics
}, m *Model, diags *diag.Diagnostics,
) {
	if private == nil {
		return
	}
	var b []byte
	if m != nil && m.stamp != "" {
		b, _ = json.Marshal(ReadStamp{ID: m.ID.ValueString(), Stamp: m.stamp})
	}
	diags.Append(private.SetKey(ctx, ReadStampKey, b)...)
}
