package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// Routing by host (ADR 10). Every request about an object goes to the host its `host`
// names: the protocol server reads that one value from the request as the CLI sent it and
// puts it in the context (tfkit.WithHost) before the framework configures the resource or
// data source that answers, whose Configure then takes that host's client. Which value:
//   - a refresh: the current state's;
//   - a plan: the proposed state's (the host it is to be on), else the prior state's (a
//     destroy);
//   - an apply: the planned state's, else the prior state's (a destroy);
//   - a data source: its configuration's.
// Objects of a type without `host`, and a null or unknown `host`, are the default host's.

// onHost is ctx routed to the host the first non-null of values names; marked
// tfkit.WithUnknownHost when that value's `host` is not known yet (a plan only: state,
// planned values at apply and a data source's configuration when it is read are known).
func onHost(ctx context.Context, values ...*tfprotov6.DynamicValue) context.Context {
	for _, v := range values {
		if name, present := hostOf(v); present {
			if name == unknownHost {
				return tfkit.WithUnknownHost(ctx)
			}
			return tfkit.WithHost(ctx, name)
		}
	}
	return ctx
}

// unknownHost is what hostOf says for a `host` not known yet: no host name has a NUL.
const unknownHost = "\x00unknown"

// hostOf is the `host` of an object value, and whether the value is an object at all
// (false for a missing or null value: the next candidate decides). It reads the one
// attribute without decoding the rest: msgpack objects are maps keyed by attribute name.
func hostOf(v *tfprotov6.DynamicValue) (string, bool) {
	if v == nil {
		return "", false
	}
	if len(v.MsgPack) > 0 {
		return hostOfMsgPack(v.MsgPack)
	}
	if len(v.JSON) > 0 {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v.JSON, &obj) != nil || obj == nil {
			return "", false
		}
		var name string
		_ = json.Unmarshal(obj["host"], &name)
		return name, true
	}
	return "", false
}

func hostOfMsgPack(b []byte) (string, bool) {
	if bytes.Equal(b, msgpackNil) {
		return "", false
	}
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	n, err := dec.DecodeMapLen()
	if err != nil || n < 0 {
		return "", false
	}
	for range n {
		key, err := dec.DecodeString()
		if err != nil {
			return "", true
		}
		if key != "host" {
			if dec.Skip() != nil {
				return "", true
			}
			continue
		}
		// Unknown is an extension type (cty's msgpack encoding); null decodes as "".
		if code, err := dec.PeekCode(); err == nil && msgpcode.IsExt(code) {
			return unknownHost, true
		}
		name, err := dec.DecodeString()
		if err != nil {
			return "", true
		}
		return name, true
	}
	return "", true
}

// ImportResourceState takes `<host>/<id>` for an object on one of the provider's named
// hosts: the request goes to that host with the id after the prefix, and the imported
// state says which host. The prefix is a named host's only: an id whose first part is
// not one (a dhcp reservation's `default/<mac>`, a volume's path) is the default host's,
// as ids always were. Where a name could be both (a network named like a host), the
// host wins; write the host in front to mean the other.
func (s shortcutServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	host, rest, ok := s.hostPrefix(req.ID)
	if !ok {
		return s.ProviderServer.ImportResourceState(ctx, req)
	}
	onIt := *req
	onIt.ID = rest
	resp, err := s.ProviderServer.ImportResourceState(tfkit.WithHost(ctx, host), &onIt)
	if err != nil || resp == nil {
		return resp, err
	}
	typ := s.schemas.typeOf(ctx, req.TypeName)
	for _, r := range resp.ImportedResources {
		if r == nil || r.State == nil || typ == nil {
			continue
		}
		if st, err := withHost(typ, r.State, host); err == nil {
			r.State = st
		} else {
			resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError,
				Summary: "Unable to import on host " + host, Detail: err.Error()})
		}
	}
	return resp, nil
}

// hostPrefix splits `<host>/<rest>` when host is one of the provider's named hosts.
func (s shortcutServer) hostPrefix(id string) (host, rest string, ok bool) {
	if s.provider == nil || s.provider.hosts == nil {
		return "", "", false
	}
	host, rest, found := strings.Cut(id, "/")
	if !found || rest == "" || host == tfkit.DefaultHost {
		return "", "", false
	}
	if !s.provider.hosts.Has(host) {
		return "", "", false
	}
	return host, rest, true
}

// withHost is an imported state with its `host` set.
func withHost(typ tftypes.Type, state *tfprotov6.DynamicValue, host string) (*tfprotov6.DynamicValue, error) {
	v, err := state.Unmarshal(typ)
	if err != nil {
		return nil, err
	}
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		return nil, err
	}
	if _, has := attrs["host"]; !has {
		return nil, fmt.Errorf("this type of object does not live on a host")
	}
	attrs["host"] = tftypes.NewValue(tftypes.String, host)
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, attrs))
	if err != nil {
		return nil, err
	}
	return &dv, nil
}

func (s shortcutServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return s.ProviderServer.ReadDataSource(onHost(ctx, req.Config), req)
}
