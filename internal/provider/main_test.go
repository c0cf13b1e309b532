package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func TestMain(m *testing.M) {
	acctest.AddSweepers()
	resource.TestMain(m)
}
