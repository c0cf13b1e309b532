package secret

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// fakeSecrets is a secretCreator: CreateSecret answers id or createErr, GetSecret getErr
// or the secret made.
type fakeSecrets struct {
	id        string
	createErr error
	getErr    error
	created   int
}

func (f *fakeSecrets) CreateSecret(_ context.Context, s libvirt.SecretSpec, _ []byte) (string, error) {
	if f.createErr != nil {
		return "", f.createErr
	}
	f.created++
	return f.id, nil
}

func (f *fakeSecrets) GetSecret(_ context.Context, id string) (*libvirt.SecretSpec, error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	return &libvirt.SecretSpec{UUID: id, UsageType: "ceph", UsageName: "client.x"}, nil
}

func secretPlan() *Model {
	return &Model{ID: types.StringUnknown(), UUID: types.StringUnknown(), UsageType: types.StringValue("ceph"),
		UsageName: types.StringValue("client.x"), Description: types.StringNull(), Ephemeral: types.BoolValue(false), Private: types.BoolValue(false)}
}

// A secret made whose read-back fails is returned with its UUID and the error (the create
// helper stores it: tainted, tracked), not dropped; a read-back that works gives libvirt's.
func TestCreateSecret_readBackFails(t *testing.T) {
	f := &fakeSecrets{id: "6b1c3a5e-0d4f-4c2a-9e1b-1234567890ab", getErr: errors.New("libvirt refused the read")}
	got, err := createSecret(context.Background(), f, secretPlan(), nil)
	if err == nil || !strings.Contains(err.Error(), "stays in state, tainted") || !strings.Contains(err.Error(), f.id) {
		t.Fatalf("error %v, want one naming the secret and saying it stays in state", err)
	}
	if got == nil || got.ID.ValueString() != f.id || got.UUID.ValueString() != f.id {
		t.Fatalf("model %+v, want the created secret's UUID (so that it is stored)", got)
	}
	f.getErr = nil
	got, err = createSecret(context.Background(), f, secretPlan(), nil)
	if err != nil || got.ID.ValueString() != f.id || got.UsageName.ValueString() != "client.x" {
		t.Fatalf("read back: %+v, %v", got, err)
	}
}

// A secret with the UUID or the usage on the host already: refused at the attribute, and
// nothing is stored.
func TestCreateSecret_taken(t *testing.T) {
	for attr, taken := range map[string]*libvirt.SecretExistsError{
		"uuid":       {UUID: "6b1c3a5e-0d4f-4c2a-9e1b-1234567890ab", UsageType: "ceph", UsageName: "other", ByUUID: true},
		"usage_name": {UUID: "7b1c3a5e-0d4f-4c2a-9e1b-1234567890ab", UsageType: "ceph", UsageName: "client.x"},
	} {
		got, err := createSecret(context.Background(), &fakeSecrets{createErr: taken}, secretPlan(), nil)
		var ae *tfkit.AttributeError
		if got != nil || !errors.As(err, &ae) || !ae.Path.Equal(path.Root(attr)) || !strings.Contains(err.Error(), "import it") ||
			!strings.Contains(err.Error(), taken.UUID) {
			t.Errorf("%s: model %v, error %v: want none and an error at %s naming %s and saying to import it", attr, got, err, attr, taken.UUID)
		}
	}
}
