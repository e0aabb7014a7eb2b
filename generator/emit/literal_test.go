package emit

import (
	"fmt"
	"go/constant"
	"go/types"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/ordergen/ordergen/runtime"
)

// TestConstNameIsTheRuntimes checks, against the runtime's source, that
// constName names the runtime's constant of every policy value: a policy
// added to the runtime, or renamed, is generated under its real name.
func TestConstNameIsTheRuntimes(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, RuntimePath)
	if err != nil || len(pkgs) != 1 || pkgs[0].Types == nil {
		t.Fatalf("load %s: %v", RuntimePath, err)
	}
	scope := pkgs[0].Types.Scope()
	var values []fmt.GoStringer
	for _, p := range runtime.FullPolicies() {
		values = append(values, p)
	}
	for _, p := range runtime.ExhaustedPolicies() {
		values = append(values, p)
	}
	for _, v := range values {
		name := constName(v)
		c, ok := scope.Lookup(name).(*types.Const)
		if !ok {
			t.Errorf("%T %v: the runtime has no constant %s", v, v, name)
			continue
		}
		got, _ := constant.Uint64Val(c.Val())
		if typ := c.Type().(*types.Named).Obj().Name(); typ != reflect.TypeOf(v).Name() || got != reflect.ValueOf(v).Uint() {
			t.Errorf("runtime.%s is %s(%d), not the %T %v", name, typ, got, v, v)
		}
	}
}

// TestPolicyValue checks a policy literal: fields in declaration order,
// zero fields left out but a runtime policy's constant, durations spelt.
func TestPolicyValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{runtime.Backlog{PerKey: 10, Total: 20}, "runtime.Backlog{\nPerKey: 10,\nTotal: 20,\nWhenFull: runtime.Reject,\n}"},
		{runtime.Backlog{WhenFull: runtime.BlockThenReject, Wait: 200 * time.Millisecond}, "runtime.Backlog{\nWhenFull: runtime.BlockThenReject,\nWait: 200 * time.Millisecond,\n}"},
		{runtime.Retry{Attempts: 1, NoJitter: true}, "runtime.Retry{\nAttempts: 1,\nNoJitter: true,\n}"},
		{runtime.Retry{Attempts: 3}, "runtime.Retry{Attempts: 3}"},
		{runtime.SendToDeadLetter, "runtime.SendToDeadLetter"},
		{2 * time.Second, "2 * time.Second"},
	} {
		// Compare without gofmt's alignment.
		got := strings.Join(strings.Fields(fmt.Sprintf("%#v", policyValue(reflect.ValueOf(c.v)))), " ")
		if want := strings.Join(strings.Fields(c.want), " "); got != want {
			t.Errorf("policyValue(%#v) = %q, want %q", c.v, got, want)
		}
	}
}
