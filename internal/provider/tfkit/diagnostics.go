package tfkit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// DiagError is an attribute error collected while resolving configuration.
type DiagError struct {
	Path    path.Path
	Summary string
	Detail  string
}

func UnknownErr(p path.Path) DiagError {
	return DiagError{Path: p, Summary: "Unknown provider configuration value",
		Detail: fmt.Sprintf("The provider cannot connect while %s is unknown (it depends on a value known only after apply). "+
			"Set it to a value known at plan time, e.g. a variable or a literal.", p)}
}

// AppendErrs adds collected errors to diagnostics.
func AppendErrs(d *diag.Diagnostics, errs []DiagError) {
	for _, e := range errs {
		d.AddAttributeError(e.Path, e.Summary, e.Detail)
	}
}

// DiagsErr is the errors among diags as one error (nil when there are none).
func DiagsErr(diags diag.Diagnostics) error {
	var errs []error
	for _, d := range diags.Errors() {
		errs = append(errs, fmt.Errorf("%s: %s", d.Summary(), d.Detail()))
	}
	return errors.Join(errs...)
}

func ListShort(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

// AlreadyExistsHint suggests importing when libvirt refuses a definition because an object
// of that name exists.
func AlreadyExistsHint(err error, typ, name string) string {
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		return ""
	}
	return "\n\nAn object named " + strconv.Quote(name) + " exists on the host already: import it (terraform import " + typ + ".<name> " + name + ") or choose another name."
}
