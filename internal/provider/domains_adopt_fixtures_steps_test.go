package provider_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/xmltree"
)

// The fixture suite's later steps (TestAccDomainAdoptFixtures_cli): the update, the
// destroys and the recreate, the comparison, and the configurations it writes.

// update applies the imports (the saved plan), then sets a description on every resource
// and applies that; each definition must then equal the twin but for the description.
func (s *adoptSuite) update(w *cliWork) {
	if !slices.ContainsFunc(s.cases, func(c *adoptCase) bool { return c.planned }) {
		return
	}
	out, code := adoptRun(w, "apply", "-input=false", "-json", "-auto-approve", adoptCLIParallelism, "plan.bin")
	if code != 0 {
		for c, why := range s.attribute(out, adoptTF{}, adoptTF{}) {
			c.fail(colUpdated, "import apply failed: "+why)
		}
	}
	inState := map[string]bool{}
	for addr := range w.stateIDs() {
		inState[strings.TrimPrefix(addr, "libvirt_domain.")] = true
	}
	var set []*adoptCase
	for _, c := range s.cases {
		switch {
		case !c.planned:
		case !inState[c.res]:
			c.fail(colUpdated, "not in state after the import apply")
		default:
			set = append(set, c)
		}
	}
	described := map[string]bool{}
	for _, c := range set {
		if c.failed[colUpdated] == "" {
			described[c.res] = true
		}
	}
	for {
		main := adoptMainTF(nil, false)
		w.write("main.tf", main.text)
		gen := adoptGeneratedTFDescribed(set, described)
		w.write("generated.tf", gen)
		out, code := adoptRun(w, "apply", "-input=false", "-json", "-auto-approve", adoptCLIParallelism)
		if code == 0 {
			break
		}
		bad := s.attribute(out, main, adoptBlocks(gen))
		for c, why := range bad {
			c.fail(colUpdated, "update failed: "+why)
		}
		if adoptApplied(out) {
			break
		}
		// Refused at plan time: those keep their configuration as generated (no change) and
		// the others are tried again.
		n := len(described)
		for c := range bad {
			delete(described, c.res)
		}
		if len(described) == n {
			s.t.Fatalf("the update is refused for resources left unchanged:\n%s", tail(out))
		}
	}
	for _, c := range set {
		if !described[c.res] {
			continue
		}
		after, err := acctest.DomainDefinitionXML(s.t, c.name)
		if err != nil {
			c.fail(colUpdated, "dumpxml after the update: "+oneLine(err.Error()))
			continue
		}
		f, err := adoptCompare(c.twin, after, c.written, true)
		switch {
		case err != nil:
			c.fail(colUpdated, err.Error())
		case len(f) > 0:
			c.fail(colUpdated, "lost on update: "+summarize(f))
		case !strings.Contains(after, "<description>adopted</description>"):
			c.fail(colUpdated, "the description was not set")
		default:
			c.pass(colUpdated)
		}
	}
}

// destroy destroys what w's state holds; libvirt must then have none of it left. Then
// the host is cleaned for the next step: the fixtures that were never imported are
// removed, and libvirt must have no adopt-* domain left. A fixture whose domain the
// destroy left fails column col (-1: the test fails).
func (s *adoptSuite) destroy(w *cliWork, col int) {
	inState := map[string]bool{}
	for _, r := range w.state() {
		if name, _ := r.Values["name"].(string); r.Type == "libvirt_domain" {
			inState[name] = true
		}
	}
	out, code := adoptRun(w, "destroy", "-input=false", "-json", "-auto-approve", "-refresh=false", adoptCLIParallelism)
	if code != 0 {
		for c, why := range s.attribute(out, adoptTF{}, adoptBlocks(readFileString(w.path("generated.tf")))) {
			if col >= 0 {
				c.fail(col, "destroy failed: "+why)
			} else {
				s.t.Errorf("destroy of the recreated %s failed: %s", c.name, why)
			}
		}
	}
	for _, name := range acctest.DomainNames(s.t, "adopt-") {
		if !inState[name] {
			continue
		}
		c := s.byRes(strings.ReplaceAll(name, "-", "_"))
		if col < 0 || c == nil {
			s.t.Errorf("destroy left domain %s", name)
		} else {
			c.fail(col, "destroy left the domain")
		}
	}
	if _, err := acctest.RemoveDomainsNamed(s.t, "adopt-"); err != nil {
		s.t.Fatalf("cannot clean the host for the next step: %v", err)
	}
}

// recreate applies the generated configuration (no import blocks) on the clean host; each
// definition must equal the twin but for what libvirt assigns or fills in.
func (s *adoptSuite) recreate(w *cliWork) {
	var set []*adoptCase
	for _, c := range s.cases {
		if c.planned {
			set = append(set, c)
		}
	}
	created := map[string]bool{}
	for len(set) > 0 {
		main := adoptMainTF(nil, false)
		w.write("main.tf", main.text)
		gen := adoptGeneratedTF(set)
		w.write("generated.tf", gen)
		out, code := adoptRun(w, "apply", "-input=false", "-json", "-auto-approve", adoptCLIParallelism)
		bad := map[*adoptCase]string{}
		if code != 0 {
			bad = s.attribute(out, main, adoptBlocks(gen))
			for c, why := range bad {
				c.fail(colRecreated, "not recreated: "+why)
			}
		}
		if code == 0 || adoptApplied(out) {
			for _, c := range set {
				if _, failed := bad[c]; !failed {
					created[c.res] = true
				}
			}
			break
		}
		n := len(set)
		if set = slices.DeleteFunc(set, func(c *adoptCase) bool { _, failed := bad[c]; return failed }); len(set) == n {
			s.t.Fatalf("apply fails for the fixtures already dropped:\n%s", tail(out))
		}
	}
	for _, c := range s.cases {
		if !created[c.res] {
			if c.planned && c.failed[colRecreated] == "" {
				c.fail(colRecreated, "not recreated")
			}
			continue
		}
		got, err := acctest.DomainDefinitionXML(s.t, c.name)
		if err != nil {
			c.fail(colRecreated, "not recreated: dumpxml: "+oneLine(err.Error()))
			continue
		}
		f, err := adoptCompare(c.twin, got, c.written, false)
		switch {
		case err != nil:
			c.fail(colRecreated, err.Error())
		case len(f) > 0:
			c.fail(colRecreated, "not identical: "+summarize(f))
		default:
			c.pass(colRecreated)
		}
	}
}

// adoptCompare compares a definition libvirt printed (got) with the twin: libvirt's
// assignments out of both (xmltree.Assigned, which also takes the provider's metadata
// record), what libvirt filled into the twin allowed to be missing (xmltree.DiffFilled);
// noDescription also takes <description> out of both (an update sets it).
func adoptCompare(twin, got string, written []byte, noDescription bool) ([]string, error) {
	wt, err := xmltree.Parse(written)
	if err != nil {
		return nil, fmt.Errorf("parse the fixture: %w", err)
	}
	tt, err := xmltree.Parse([]byte(twin))
	if err != nil {
		return nil, fmt.Errorf("parse the twin: %w", err)
	}
	gt, err := xmltree.Parse([]byte(got))
	if err != nil {
		return nil, fmt.Errorf("parse libvirt's XML: %w", err)
	}
	if noDescription {
		for _, n := range []*xmltree.Node{tt, gt, wt} {
			n.Remove(func(path string, _ *xmltree.Node) bool { return path == "/domain/description" })
		}
	}
	xmltree.Assigned(tt, wt)
	xmltree.Assigned(gt, wt)
	return xmltree.DiffFilled(tt, gt, wt), nil
}

// adoptTF is a configuration file the suite wrote, with the line range of each block by
// resource name (to find the fixture a diagnostic without an address is about).
type adoptTF struct {
	text   string
	lines  map[string][2]int
	blocks map[string]string
}

// adoptMainTF is main.tf: the provider, and an import block for each case when imports.
func adoptMainTF(set []*adoptCase, imports bool) adoptTF {
	var b strings.Builder
	b.WriteString(acctest.ProviderBlock(""))
	tf := adoptTF{lines: map[string][2]int{}}
	if imports {
		for _, c := range set {
			first := strings.Count(b.String(), "\n") + 1
			fmt.Fprintf(&b, "import {\n  to = libvirt_domain.%s\n  id = %q\n}\n", c.res, c.name)
			tf.lines[c.res] = [2]int{first, first + 3}
		}
	}
	tf.text = b.String()
	return tf
}

// adoptGeneratedTF is generated.tf for the cases: their generated blocks.
func adoptGeneratedTF(set []*adoptCase) string {
	var b strings.Builder
	for _, c := range set {
		b.WriteString(c.block)
		b.WriteString("\n")
	}
	return b.String()
}

// adoptGeneratedTFDescribed is generated.tf with description = "adopted" on the
// resources described names.
func adoptGeneratedTFDescribed(set []*adoptCase, described map[string]bool) string {
	var b strings.Builder
	for _, c := range set {
		if described[c.res] {
			b.WriteString(describeBlock(c.block))
		} else {
			b.WriteString(c.block)
		}
		b.WriteString("\n")
	}
	return b.String()
}

var (
	adoptBlockStart = regexp.MustCompile(`^resource "libvirt_domain" "([a-z0-9_]+)" \{$`)
	adoptDescLine   = regexp.MustCompile(`^  description\s*=\s*(.*)$`)
)

// adoptBlocks splits a generated configuration into its resource blocks, by resource
// name, with their line ranges.
func adoptBlocks(text string) adoptTF {
	tf := adoptTF{text: text, lines: map[string][2]int{}}
	blocks := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := adoptBlockStart.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && lines[j] != "}" {
			j++
		}
		if j == len(lines) {
			j--
		}
		blocks[m[1]] = strings.Join(lines[i:j+1], "\n") + "\n"
		tf.lines[m[1]] = [2]int{i + 1, j + 1}
		i = j
	}
	tf.blocks = blocks
	return tf
}

// describeBlock sets description = "adopted" in one generated resource block: the line it
// has (Terraform writes null for a domain without one, OpenTofu ""; a heredoc is replaced
// whole), else one added after the first line.
func describeBlock(block string) string {
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		m := adoptDescLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		end := i
		if marker, ok := strings.CutPrefix(strings.TrimSpace(m[1]), "<<"); ok {
			marker = strings.TrimPrefix(marker, "-")
			for end < len(lines)-1 && strings.TrimSpace(lines[end]) != marker {
				end++
			}
		}
		out := append(slices.Clone(lines[:i]), `  description = "adopted"`)
		return strings.Join(append(out, lines[end+1:]...), "\n")
	}
	return lines[0] + "\n  description = \"adopted\"\n" + strings.Join(lines[1:], "\n")
}
