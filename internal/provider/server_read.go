package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/domain"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// The refresh shortcut (ADR 8). A stopped domain's state is a function of its persistent
// definition, its autostart flag, the prior state and the provider's code, nothing else
// (domain/stamp.go says when that holds). So when a refresh finds all of them as
// the last full read left them, its answer is the prior state, and the framework's decode,
// model reflection and encode (most of a no-change plan's provider CPU) are skipped:
// ReadResource asks libvirt the one round trip it always asks, compares, and answers.
//
// What the last full read saw is kept in the resource's private state: the domain's
// read stamp (set by libvirt_domain's Create, Update and Read) and, added here, a sum of
// the state that read produced, so that a state changed since by anything else (an
// update, an upgrade, a hand edit) never takes the shortcut.
const stateSumKey = "state_sum"

// CodeTokenEnv names the provider's code for the refresh shortcut when its build does not
// (domain.CodeTokenEnv: the read stamps are the domain's).
const CodeTokenEnv = domain.CodeTokenEnv

// VerifyShortcutEnv, when set, makes every refresh the shortcut would answer also take
// the framework's way and fail when the two states differ: the acceptance tests set it,
// so that each of their plans checks the shortcut and the full read at once.
const VerifyShortcutEnv = "LIBVIRT_PROVIDER_VERIFY_SHORTCUT"

func (s shortcutServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	ctx = onHost(ctx, req.CurrentState)
	shortcut := req.TypeName == "libvirt_domain" && s.unchangedSinceLastRead(ctx, req)
	if shortcut {
		tflog.Debug(ctx, "libvirt_domain refresh: the domain is as the last read found it; the prior state stands")
	}
	if shortcut && os.Getenv(VerifyShortcutEnv) == "" {
		return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}, nil
	}
	resp, err := s.ProviderServer.ReadResource(ctx, req)
	if shortcut && err == nil && resp != nil && s.stateSum(ctx, req.TypeName, resp.NewState) != s.stateSum(ctx, req.TypeName, req.CurrentState) {
		resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError,
			Summary: "libvirt_domain refresh shortcut disagrees with a full read",
			Detail: "The domain is as the last read found it, so the refresh shortcut answers with the prior state, but a full read " +
				"of it gives another state: a read that is not idempotent, or a stamp that misses what the state depends on. " +
				"This is a bug of the provider (seen with " + VerifyShortcutEnv + " set, as the acceptance tests do). " +
				"Attributes that differ: " + s.differing(ctx, req.TypeName, req.CurrentState, resp.NewState) + "."})
	}
	if err == nil && resp != nil && req.TypeName == "libvirt_domain" {
		resp.Private = withStateSum(resp.Private, s.stateSum(ctx, req.TypeName, resp.NewState))
	}
	return resp, err
}

func (s shortcutServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	ctx = onHost(ctx, req.PlannedState, req.PriorState)
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if err == nil && resp != nil && req.TypeName == "libvirt_domain" && !hasErrors(resp.Diagnostics) {
		resp.Private = withStateSum(resp.Private, s.stateSum(ctx, req.TypeName, resp.NewState))
	}
	return resp, err
}

// unchangedSinceLastRead is true when the prior state is the one the last full read of the
// domain produced and the domain is as that read found it.
func (s shortcutServer) unchangedSinceLastRead(ctx context.Context, req *tfprotov6.ReadResourceRequest) bool {
	if s.provider == nil || s.provider.hosts == nil || req.CurrentState == nil || len(req.CurrentState.MsgPack) == 0 {
		return false
	}
	client, err := s.provider.hosts.Client(tfkit.HostFrom(ctx))
	if err != nil {
		return false // the framework's way reports it
	}
	priv := decodePrivate(req.Private)
	var stamp domain.ReadStamp
	var sum string
	if json.Unmarshal(priv[domain.ReadStampKey], &stamp) != nil || json.Unmarshal(priv[stateSumKey], &sum) != nil ||
		stamp.ID == "" || sum == "" || sum != s.stateSum(ctx, req.TypeName, req.CurrentState) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := client.GetDomainStatus(ctx, stamp.ID)
	if err != nil {
		return false // not found, unreachable: the framework's way decides
	}
	return domain.StampOf(st, false) == stamp.Stamp
}

func hasErrors(ds []*tfprotov6.Diagnostic) bool {
	for _, d := range ds {
		if d != nil && d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

// decodePrivate is the framework's private state encoding: a JSON object of keys to
// JSON values, each carried as bytes (base64 in the JSON).
func decodePrivate(b []byte) map[string][]byte {
	m := map[string][]byte{}
	if len(b) > 0 {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// withStateSum adds the state's sum to private when private holds a read stamp (the
// state was read from a stopped domain), and drops a stale one otherwise.
func withStateSum(private []byte, sum string) []byte {
	m := decodePrivate(private)
	if _, ok := m[domain.ReadStampKey]; !ok || sum == "" {
		if _, had := m[stateSumKey]; !had {
			return private
		}
		delete(m, stateSumKey)
	} else {
		m[stateSumKey], _ = json.Marshal(sum)
	}
	if len(m) == 0 {
		return nil
	}
	out, err := json.Marshal(m)
	if err != nil {
		return private
	}
	return out
}

// stateSum is a sum of the state's value, not of its encoding: the CLI and the framework
// write the same value with map keys and set elements in different orders (valueSum).
// "" when the state cannot be decoded.
func (s shortcutServer) stateSum(ctx context.Context, typeName string, state *tfprotov6.DynamicValue) string {
	idx := s.schemas.index(ctx, typeName)
	if idx == nil || state == nil || len(state.MsgPack) == 0 {
		return ""
	}
	v, err := state.Unmarshal(idx.typ)
	if err != nil || v.IsNull() {
		return ""
	}
	return hex.EncodeToString(valueSum(v))
}

// valueSum hashes a value canonically: object attributes and map keys sorted, set
// elements by their own sums, lists and tuples in order.
func valueSum(v tftypes.Value) []byte {
	h := sha256.New()
	switch {
	case !v.IsKnown():
		h.Write([]byte("U"))
	case v.IsNull():
		h.Write([]byte("N"))
	default:
		switch t := v.Type().(type) {
		case tftypes.Object:
			var m map[string]tftypes.Value
			_ = v.As(&m)
			keys := make([]string, 0, len(t.AttributeTypes))
			for k := range t.AttributeTypes {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			h.Write([]byte("O"))
			for _, k := range keys {
				fmt.Fprintf(h, "%d:%s", len(k), k)
				h.Write(valueSum(m[k]))
			}
		case tftypes.Map:
			var m map[string]tftypes.Value
			_ = v.As(&m)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			h.Write([]byte("M"))
			for _, k := range keys {
				fmt.Fprintf(h, "%d:%s", len(k), k)
				h.Write(valueSum(m[k]))
			}
		case tftypes.Set:
			var l []tftypes.Value
			_ = v.As(&l)
			sums := make([]string, 0, len(l))
			for _, e := range l {
				sums = append(sums, string(valueSum(e)))
			}
			sort.Strings(sums)
			h.Write([]byte("S"))
			for _, x := range sums {
				h.Write([]byte(x))
			}
		case tftypes.List, tftypes.Tuple:
			var l []tftypes.Value
			_ = v.As(&l)
			h.Write([]byte("L"))
			for _, e := range l {
				h.Write(valueSum(e))
			}
		default:
			fmt.Fprintf(h, "P%s", v.String()) // string, number, bool: their text form
		}
	}
	return h.Sum(nil)
}

// differing names the top-level attributes whose values differ between two states.
func (s shortcutServer) differing(ctx context.Context, typeName string, a, b *tfprotov6.DynamicValue) string {
	idx := s.schemas.index(ctx, typeName)
	if idx == nil || a == nil || b == nil {
		return "unknown"
	}
	va, errA := a.Unmarshal(idx.typ)
	vb, errB := b.Unmarshal(idx.typ)
	var ma, mb map[string]tftypes.Value
	if errA != nil || errB != nil || va.As(&ma) != nil || vb.As(&mb) != nil {
		return "unknown"
	}
	var out []string
	for k, x := range ma {
		if y, ok := mb[k]; !ok || !x.Equal(y) {
			out = append(out, fmt.Sprintf("%s (%v / %v)", k, x, mb[k]))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
