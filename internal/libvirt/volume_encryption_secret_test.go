package libvirt

import (
	"strings"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"
)

// fakeSecrets is a host's secrets (UUID -> volume usage) and domains (name -> XML), for
// encryptionWithSecret.
type fakeSecrets struct {
	secrets  map[string]string
	domains  map[string]string
	usageErr error
	listed   int // ConnectListAllDomains calls
}

func (f *fakeSecrets) SecretLookupByUUID(u golibvirt.UUID) (golibvirt.Secret, error) {
	id := uuid.UUID(u).String()
	if usage, ok := f.secrets[id]; ok {
		return golibvirt.Secret{UUID: u, UsageType: int32(golibvirt.SecretUsageTypeVolume), UsageID: usage}, nil
	}
	return golibvirt.Secret{}, golibvirt.Error{Code: uint32(golibvirt.ErrNoSecret), Message: "Secret not found: no secret with matching uuid"}
}

func (f *fakeSecrets) SecretLookupByUsage(typ int32, usage string) (golibvirt.Secret, error) {
	if f.usageErr != nil {
		return golibvirt.Secret{}, f.usageErr
	}
	for id, u := range f.secrets {
		if u == usage && typ == int32(golibvirt.SecretUsageTypeVolume) {
			return golibvirt.Secret{UUID: golibvirt.UUID(uuid.MustParse(id)), UsageType: typ, UsageID: u}, nil
		}
	}
	return golibvirt.Secret{}, golibvirt.Error{Code: uint32(golibvirt.ErrNoSecret), Message: "Secret not found: no secret with matching usage"}
}

func (f *fakeSecrets) ConnectListAllDomains(int32, golibvirt.ConnectListAllDomainsFlags) ([]golibvirt.Domain, uint32, error) {
	f.listed++
	var ds []golibvirt.Domain
	for name := range f.domains {
		ds = append(ds, golibvirt.Domain{Name: name})
	}
	return ds, uint32(len(ds)), nil
}

func (f *fakeSecrets) DomainGetXMLDesc(d golibvirt.Domain, _ golibvirt.DomainXMLFlags) (string, error) {
	if doc, ok := f.domains[d.Name]; ok {
		return doc, nil
	}
	return "", golibvirt.Error{Code: uint32(golibvirt.ErrNoDomain), Message: "Domain not found"}
}

const (
	secretA = "ac979fbe-fa18-40bd-b095-2d3b746edad6"
	secretB = "5d1c3c2e-0b8f-4a43-9d7c-3f2e8a1b6c90"
	volPath = "/var/lib/kvmforge-testhost/pool/web-luks.raw"
)

// targets: the volume's <target> as libvirt 9.0 reports it while it still has the secret
// the volume was created with, and after a pool refresh found none by usage.
var (
	targetCreated = `<volume type='file'><name>web-luks.raw</name><target><path>` + volPath + `</path><format type='raw'/>
		<encryption format='luks'><secret type='passphrase' uuid='` + secretA + `'/></encryption></target></volume>`
	targetRefreshed = `<volume type='file'><name>web-luks.raw</name><target><path>` + volPath + `</path><format type='raw'/>
		<encryption format='luks'>
		</encryption></target></volume>`
	targetPlain = `<volume type='file'><name>web.raw</name><target><path>` + volPath + `</path><format type='raw'/></target></volume>`
)

// domainOn is a domain with a disk on the file path whose encryption names secret.
func domainOn(name, path, secret string) string {
	return `<domain type='qemu'><name>` + name + `</name><devices><disk type='file' device='disk'><driver name='qemu' type='raw'/>
		<source file='` + path + `'><encryption format='luks'><secret type='passphrase' uuid='` + secret + `'/></encryption></source>
		<target dev='vdb' bus='virtio'/></disk></devices></domain>`
}

func readEncryption(t *testing.T, f *fakeSecrets, doc string) *VolumeEncryption {
	t.Helper()
	var x libvirtxml.StorageVolume
	if err := x.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	e, err := encryptionWithSecret(f, x.Target, x.Target.Path)
	if err != nil {
		t.Fatalf("encryptionWithSecret: %v", err)
	}
	return e
}

// The secret a read reports for an encrypted volume no longer depends on whether the
// pool was refreshed since the volume was made. Before, a volume whose secret's usage is
// not its path (here "elsewhere") read with its secret until any client refreshed the
// pool and without one after: an import then could not tell it, although the domain that
// uses the volume names it.
func TestEncryptionWithSecret_sameBeforeAndAfterRefresh(t *testing.T) {
	f := &fakeSecrets{secrets: map[string]string{secretA: "elsewhere"}, domains: map[string]string{"web": domainOn("web", volPath, secretA)}}
	before, after := readEncryption(t, f, targetCreated), readEncryption(t, f, targetRefreshed)
	if before == nil || after == nil || before.Secret != secretA || after.Secret != secretA {
		t.Fatalf("before the refresh %+v, after %+v; want luks with secret %s both times", before, after, secretA)
	}
}

func TestEncryptionWithSecret(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		f         *fakeSecrets
		want      string // the secret; "-" for a plain volume
		scan      bool   // whether the domains are looked at
	}{
		{name: "libvirt names the secret", doc: targetCreated, f: &fakeSecrets{secrets: map[string]string{secretA: "elsewhere"}}, want: secretA},
		{name: "libvirt names a secret undefined since, the usage names another", doc: targetCreated,
			f: &fakeSecrets{secrets: map[string]string{secretB: volPath}}, want: secretB},
		{name: "libvirt names a secret undefined since, nothing else tells", doc: targetCreated,
			f: &fakeSecrets{secrets: map[string]string{}}, want: "", scan: true},
		{name: "refreshed: the usage names the path", doc: targetRefreshed,
			f: &fakeSecrets{secrets: map[string]string{secretA: volPath}}, want: secretA},
		{name: "refreshed: a domain's disk names it", doc: targetRefreshed,
			f: &fakeSecrets{secrets: map[string]string{secretA: "elsewhere"}, domains: map[string]string{
				"web": domainOn("web", volPath, secretA), "other": domainOn("other", volPath+".bak", secretB)}}, want: secretA, scan: true},
		{name: "refreshed: two domains agree", doc: targetRefreshed,
			f: &fakeSecrets{secrets: map[string]string{secretA: "elsewhere"}, domains: map[string]string{
				"web": domainOn("web", volPath, secretA), "web2": domainOn("web2", volPath, strings.ToUpper(secretA))}}, want: secretA, scan: true},
		{name: "refreshed: domains disagree", doc: targetRefreshed,
			f: &fakeSecrets{secrets: map[string]string{secretA: "a", secretB: "b"}, domains: map[string]string{
				"web": domainOn("web", volPath, secretA), "web2": domainOn("web2", volPath, secretB)}}, want: "", scan: true},
		{name: "refreshed: the domain's secret does not exist", doc: targetRefreshed,
			f: &fakeSecrets{secrets: map[string]string{}, domains: map[string]string{"web": domainOn("web", volPath, secretA)}}, want: "", scan: true},
		{name: "refreshed: no domain uses it", doc: targetRefreshed,
			f: &fakeSecrets{secrets: map[string]string{secretA: "elsewhere"}, domains: map[string]string{"other": domainOn("other", volPath+"2", secretA)}}, want: "", scan: true},
		{name: "plain", doc: targetPlain, f: &fakeSecrets{}, want: "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := readEncryption(t, tc.f, tc.doc)
			switch {
			case tc.want == "-":
				if e != nil {
					t.Fatalf("got %+v, want a plain volume", e)
				}
			case e == nil || e.Format != EncryptionLUKS || e.Secret != tc.want:
				t.Fatalf("got %+v, want luks with secret %q", e, tc.want)
			}
			if scanned := tc.f.listed > 0; scanned != tc.scan {
				t.Errorf("domains looked at: %t, want %t", scanned, tc.scan)
			}
		})
	}
}

// A failure of the connection during the look is an error, not "no secret".
func TestEncryptionWithSecret_transport(t *testing.T) {
	f := &fakeSecrets{usageErr: golibvirt.ErrInterrupted}
	var x libvirtxml.StorageVolume
	if err := x.Unmarshal(targetRefreshed); err != nil {
		t.Fatal(err)
	}
	if _, err := encryptionWithSecret(f, x.Target, volPath); err == nil || !IsTransport(classify("read", "u", err)) {
		t.Errorf("got %v, want the transport error", err)
	}
}
