package provider_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"regexp"
	"testing"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
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
