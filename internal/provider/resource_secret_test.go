package provider_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

const secretRes = "libvirt_secret.s"

// secretHas checks that libvirt keeps want as the value of secret id.
func secretHas(t *testing.T, id *string, want []byte) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, ok, err := acctest.SecretValue(t, *id)
		if err != nil || !ok || !bytes.Equal(got, want) {
			return fmt.Errorf("secret %s holds %q (set: %t, %v), want %q", *id, got, ok, err, want)
		}
		return nil
	}
}

// A Ceph key: libvirt stores its bytes (the base64 decoded), the state the key as given;
// a new value is set in place; a value changed behind Terraform's back shows in the next
// plan; import by UUID reads the value back.
func TestAccSecret_cephValue(t *testing.T) {
	acctest.RequireAcc(t)
	id, name := uuid.NewString(), acctest.RandomName("ceph")
	key1, key2 := []byte("ceph-key-one\x00\xff"), []byte("ceph-key-two\x01")
	config := func(key []byte, desc string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_secret", "s", attr("uuid", id), attr("usage_type", "ceph"),
			attr("usage_name", name), attr("description", desc), attr("value", base64.StdEncoding.EncodeToString(key)))
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"secret " + id: acctest.SecretLookup(id)}),
		Steps: []resource.TestStep{
			{
				Config:            config(key1, "rbd client"),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(secretRes, "id", id, "private", false, "ephemeral", false),
				Check:             secretHas(t, &id, key1),
			},
			{
				Config:           config(key2, "rbd client, rotated"),
				ConfigPlanChecks: acctest.Updates(secretRes, "", acctest.PlanIs(secretRes, "id", id)),
				Check:            secretHas(t, &id, key2),
			},
			{
				PreConfig: func() {
					if err := acctest.SetSecretValue(t, id, []byte("changed by hand")); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config(key2, "rbd client, rotated"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config:           config(key2, "rbd client, rotated"),
				ConfigPlanChecks: acctest.Updates(secretRes, ""),
				Check:            secretHas(t, &id, key2),
			},
			importStep(secretRes, id, "timeouts"),
		},
	})
}

// value_wo never reaches plan or state; bumping value_wo_version sets it again (in
// place); a private secret's value libvirt never shows. A random UUID, for a LUKS volume.
func TestAccSecret_writeOnlyPrivate(t *testing.T) {
	acctest.RequireAcc(t)
	name := "/var/lib/libvirt/images/" + acctest.RandomName("luks") + ".qcow2"
	var id string
	config := func(pass string, version int, private bool) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_secret", "s", attr("usage_type", "volume"), attr("usage_name", name),
			attr("value_wo", pass), attr("value_wo_version", version), attr("private", private))
	}
	private := func(*terraform.State) error {
		if _, _, err := acctest.SecretValue(t, id); err == nil || !regexp.MustCompile(`secret is private`).MatchString(err.Error()) {
			return fmt.Errorf("the value of private secret %s: %v, want libvirt's refusal", id, err)
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			return acctest.CheckGone(map[string]acctest.Lookup{"secret " + id: acctest.SecretLookup(id)})(s)
		},
		Steps: []resource.TestStep{
			{
				Config:            config("correct horse", 1, false),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(secretRes, "value", nil, "value_wo", nil, "private", false),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith(secretRes, "id", func(v string) error { id = v; return nil }),
					secretHas(t, &id, []byte("correct horse"))),
			},
			{
				Config:            config("battery staple", 2, false),
				ConfigPlanChecks:  acctest.Updates(secretRes, "", acctest.PlanIs(secretRes, "value_wo", nil)),
				ConfigStateChecks: acctest.State(secretRes, "value", nil, "value_wo", nil),
				Check:             secretHas(t, &id, []byte("battery staple")),
			},
			{
				Config:           config("battery staple", 2, true),
				ConfigPlanChecks: acctest.Does(secretRes, acctest.DestroyBeforeCreate),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith(secretRes, "id", func(v string) error { id = v; return nil }),
					private),
			},
		},
	})
}

// A second secret for a usage the host has a secret for already is refused at plan time,
// naming the secret to import; nothing is made.
func TestAccSecret_usageTaken(t *testing.T) {
	acctest.RequireAcc(t)
	id, name := uuid.NewString(), acctest.RandomName("taken")
	acctest.DefineSecret(t, id, "ceph", name)
	acctest.Run(t, resource.TestCase{
		// Nothing was made or changed: the usage's secret on the host is still the one
		// defined here, and still holds no value.
		CheckDestroy: acctest.HostCheck(func() error {
			got, err := acctest.Client(t).SecretByUsage(acctest.Ctx(t), "ceph", name)
			if err != nil {
				return err
			}
			if got != id {
				return fmt.Errorf("the ceph secret %s on the host is %s, want the one defined before, %s", name, got, id)
			}
			if _, ok, err := acctest.SecretValue(t, id); err != nil || ok {
				return fmt.Errorf("secret %s has a value now (err %v): the refused plan set it", id, err)
			}
			return nil
		}),
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + resourceHCL("libvirt_secret", "s", attr("usage_type", "ceph"), attr("usage_name", name),
				attr("value", base64.StdEncoding.EncodeToString([]byte("key")))),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)has a secret with\s+this\s+usage\s+already\s+\(UUID\s+` + id + `\).*terraform\s+import`),
		}},
	})
}

// A configured uuid of a secret already on the host that no state tracks is refused,
// naming it and saying to import it: at plan time, and at apply when the uuid is known only
// then (Create checks again). The secret on the host is left as it was: its usage, and
// its value.
func TestAccSecret_uuidTaken(t *testing.T) {
	acctest.RequireAcc(t)
	id, theirs, ours := uuid.NewString(), acctest.RandomName("theirs"), acctest.RandomName("ours")
	acctest.DefineSecret(t, id, "ceph", theirs)
	if err := acctest.SetSecretValue(t, id, []byte("their key")); err != nil {
		t.Fatal(err)
	}
	secret := func(uuidExpr string) string {
		return resourceHCL("libvirt_secret", "s", "uuid = "+uuidExpr, attr("usage_type", "ceph"), attr("usage_name", ours),
			attr("value", base64.StdEncoding.EncodeToString([]byte("our key"))))
	}
	untouched := acctest.HostCheck(func() error {
		got, err := acctest.Client(t).GetSecret(acctest.Ctx(t), id)
		if err != nil {
			return err
		}
		if got.UsageName != theirs {
			return fmt.Errorf("secret %s now serves %s, want %s as defined", id, got.UsageName, theirs)
		}
		if v, ok, err := acctest.SecretValue(t, id); err != nil || !ok || string(v) != "their key" {
			return fmt.Errorf("secret %s holds %q (set %t, %v), want its own value", id, v, ok, err)
		}
		if other, err := acctest.Client(t).SecretByUsage(acctest.Ctx(t), "ceph", ours); err == nil {
			return fmt.Errorf("a ceph secret %s (%s) was made", ours, other)
		}
		return nil
	})
	acctest.Run(t, resource.TestCase{
		CheckDestroy: untouched,
		Steps: []resource.TestStep{
			{
				Config:      acctest.ProviderBlock("") + secret(fmt.Sprintf("%q", id)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Secret UUID taken.*has a secret with UUID\s+` + id + `\s+already.*terraform\s+import`),
			},
			{
				// Known only at apply: Terraform plans the secret again with it then, and
				// that plan refuses it.
				Config: acctest.ProviderBlock("") + fmt.Sprintf("resource \"terraform_data\" \"u\" {\n  input = %q\n}\n", id) +
					secret("terraform_data.u.output"),
				ExpectError: regexp.MustCompile(`(?s)Secret UUID taken.*terraform\s+import`),
			},
			{
				// The create itself (CreateSecret, which Create calls) refuses it too: by
				// its UUID, and a new UUID by its usage.
				PreConfig: func() {
					for _, s := range []libvirt.SecretSpec{{UUID: id, UsageType: "ceph", UsageName: ours}, {UsageType: "ceph", UsageName: theirs}} {
						made, err := acctest.Client(t).CreateSecret(acctest.Ctx(t), s, []byte("our key"))
						var taken *libvirt.SecretExistsError
						if !errors.As(err, &taken) || taken.UUID != id || !strings.Contains(err.Error(), "import it") {
							t.Errorf("create %+v: made %q, error %v: want it refused, naming %s", s, made, err, id)
						}
					}
				},
				Config: acctest.ProviderBlock(""),
				Check:  untouched,
			},
		},
	})
}
