package breaking

import (
	"strings"
	"testing"
)

const acceptOld = `version: 1
package: shop
entities:
  Order:
    key: {field: OrderID, type: string}
    events:
      OrderPlaced: {fields: {Total: int64, Note: string}}
      OrderPaid: {}
`

func compareTexts(t *testing.T, old, new string) Result {
	t.Helper()
	o, diags := Load([]byte(old))
	if o == nil {
		t.Fatal(diags.Format("old"))
	}
	n, diags := Load([]byte(new))
	if n == nil {
		t.Fatal(diags.Format("new"))
	}
	return Accept([]byte(new), Compare(o, n))
}

func TestAcceptTakesTheCommentOnTheReportedLine(t *testing.T) {
	new := strings.Replace(acceptOld, "{fields: {Total: int64, Note: string}}",
		"{fields: {Total: float64, Note: bool}}  # ordergen:breaking-ok FIELD_SAME_TYPE cents became a decimal amount", 1)
	new = strings.Replace(new, "      OrderPaid: {}\n", "", 1)
	r := compareTexts(t, acceptOld, new)
	if r.Problems.Len() != 0 || r.Unused.Len() != 0 {
		t.Fatalf("problems %v, unused %v", r.Problems.Items(), r.Unused.Items())
	}
	// Both field type changes are on line 7 and accepted; the removed
	// event, reported on the events: line, is not.
	if len(r.Accepted) != 2 || r.Accepted[0].Reason != "cents became a decimal amount" || !strings.HasPrefix(r.Accepted[0].Change.Msg, "FIELD_SAME_TYPE: ") {
		t.Errorf("accepted %+v", r.Accepted)
	}
	if items := r.Breaking.Items(); len(items) != 1 || !strings.HasPrefix(items[0].Msg, "EVENT_NO_DELETE: ") {
		t.Errorf("breaking %v, want the removed event only", items)
	}
}

func TestAcceptReportsUnusableAndUnusedComments(t *testing.T) {
	new := strings.Replace(acceptOld, "key: {field: OrderID, type: string}", "key: {field: OrderID, type: string} # ordergen:breaking-ok FIELD_SAME_TYP typo", 1)
	new = strings.Replace(new, "OrderPaid: {}", "OrderPaid: {} # ordergen:breaking-ok EVENT_NO_DELETE", 1)
	new = strings.Replace(new, "version: 1", "version: 1 # ordergen:breaking-ok", 1)
	new = strings.Replace(new, "package: shop", "package: shop # ordergen:breaking-ok ENTITY_NO_DELETE nothing is removed", 1)
	r := compareTexts(t, acceptOld, new)
	var got []string
	for _, p := range r.Problems.Items() {
		got = append(got, p.String())
	}
	want := []string{
		"1:12: ordergen:breaking-ok needs a rule ID and a reason: # ordergen:breaking-ok RULE_ID why the break is fine",
		`5:41: ordergen:breaking-ok names no rule "FIELD_SAME_TYP" (did you mean FIELD_SAME_TYPE?) (ordergen breaking -rules lists them)`,
		"8:21: ordergen:breaking-ok EVENT_NO_DELETE needs a reason: say why the break is fine",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if u := r.Unused.Items(); len(u) != 1 || u[0].Pos.Line != 2 || !strings.Contains(u[0].Msg, "accepts nothing") {
		t.Errorf("unused %v, want the comment on line 2", u)
	}
}

func TestAcceptNeedsACommentMarker(t *testing.T) {
	// A # glued to a value does not start a YAML comment.
	src := "version: 1\npackage: shop\nentities: {A: {key: {field: ID, type: string}, events: {E: {fields: {Tag: string}}}}} #ordergen:breaking-ok\nx: \"a#ordergen:breaking-ok FIELD_NO_DELETE no\"\n"
	r := Accept([]byte(src), Result{}.Breaking)
	if p := r.Problems.Items(); len(p) != 1 || p[0].Pos.Line != 3 {
		t.Errorf("problems %v, want only the comment on line 3 (the marker glued to a value is none)", p)
	}
}
