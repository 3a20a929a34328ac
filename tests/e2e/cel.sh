#!/usr/bin/env bash
# cel.sh -- x-kubernetes-validations (CEL) rules end to end with kubectl:
# rules at the root, on objects, scalars and lists; transition rules with
# oldSelf (a map list's items correlated by key); runtime errors; reason;
# messageExpression;
# kube's blocking errors; the /status subresource; ratcheting after a CRD
# adds a rule; a rule outside lapis's subset (a Warning); and the real
# VolumeSnapshot CRD's rules.
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init cel

if ! command -v kubectl >/dev/null 2>&1; then
	echo "SKIPPED: needs kubectl"
	e2e_finish
	exit 0
fi
DATA=$WORK/data
serve_lapis serve "$DATA"
check "server starts" [ -n "$URL" ]
export KUBECONFIG=$DATA/kubeconfig HOME=$WORK/home
mkdir -p "$HOME"

# The widget CRD; $1 is the YAML of spec.properties.note (the ratcheting
# step adds a rule to it).
widget_crd() {
	cat <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: "self.metadata.name.startsWith('w-')"
          message: name must start with w-
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: "!has(self.min) || !has(self.max) || self.min <= self.max"
              message: min must not exceed max
            - rule: "self.size <= self.limit"
            - rule: "self.size < 100"
              message: size is too big
              messageExpression: "'size %d is above 99'.format([self.size])"
            - rule: "!has(self.q) || timestamp('2000-01-01T00:00:00Z').getHours('Europe/Paris') == 1"
            - rule: "url('https://a.example/') == url('https://a.example/')"
            - rule: "!has(self.q) || '%s'.format([self.q]) != 'bad'"
              messageExpression: "'q %s is refused (%.1f%% of %d, %s)'.format([self.q, 99.5, 1234, [self.size]])"
            - rule: "!format.dns1123Label().validate(self.?alias.orValue('ok')).hasValue()"
              message: alias must be a DNS label
            properties:
              size: {type: integer}
              limit: {type: integer}
              min: {type: integer}
              max: {type: integer}
              q: {type: string}
              alias: {type: string}
              mem:
                type: string
                x-kubernetes-validations:
                - {rule: "quantity(self).compareTo(quantity('1Gi')) <= 0", message: mem is at most 1Gi}
              share:
                x-kubernetes-int-or-string: true
                x-kubernetes-validations:
                - {rule: "type(self) == int ? self >= 0 : self.endsWith('%')", message: share is a count or a percentage}
              level:
                type: integer
                x-kubernetes-validations:
                - {rule: "self >= oldSelf.orValue(1)", message: level starts at 1 and never drops, optionalOldSelf: true}
              zones:
                type: array
                items: {type: string}
                x-kubernetes-validations:
                - {rule: "sets.contains(['a', 'b', 'c'], self)", message: zones are a b or c}
              mode:
                type: string
                x-kubernetes-validations:
                - {rule: "self == oldSelf", message: mode is immutable}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
                  x-kubernetes-validations:
                  - {rule: "self.port == oldSelf.port", message: a named port keeps its number}
              tags:
                type: array
                maxItems: 16
                items: {type: string, maxLength: 63}
                x-kubernetes-validations:
                - rule: "self.all(t, t.matches('^[a-z]+\$'))"
                  message: tags are lowercase words
              host:
                type: string
                x-kubernetes-validations:
                - {rule: "!isIP(self)", message: host is a name}
              endpoint:
                type: string
                x-kubernetes-validations:
                - {rule: "isURL(self) && url(self).getScheme() == 'https'", message: endpoint is an https URL}
              timeout:
                type: string
                x-kubernetes-validations:
                - {rule: "duration(self).getSeconds() <= 30", message: at most 30s}
              replicas:
                type: integer
                x-kubernetes-validations:
                - {rule: "self >= 0", message: no negative replicas, reason: FieldValueForbidden}
$1
          status:
            type: object
            properties:
              phase: {type: string}
            x-kubernetes-validations:
            - {rule: "self.phase in ['Ready', 'Pending']", message: unknown phase}
YAML
}
widget_crd "              note: {type: string}" >"$WORK/widget.yaml"
expect_rc 0 "a CRD with x-kubernetes-validations rules" kubectl apply -f "$WORK/widget.yaml"
expect_rc 0 "... is Established" kubectl wait --for=condition=Established crd/widgets.cel.example.com --timeout=20s

w() { # NAME SPEC-JSON: a widget
	printf '{"apiVersion":"cel.example.com/v1","kind":"Widget","metadata":{"name":"%s"},"spec":%s}' "$1" "$2"
}

expect_rc 0 "a widget every rule accepts" kubectl create -f - <<<"$(w w-a '{"size":1,"limit":5,"mode":"fast","ports":[{"name":"http","port":80}],"tags":["abc"]}')"
check "... warns of the rule outside lapis's subset, once, with why" \
	err_has "^Warning: spec: x-kubernetes-validations rule was not evaluated \(.*url values.*\): url\('https://a.example/'\) =="
check "... and of no other rule" [ "$(grep -c 'x-kubernetes-validations' "$WORK/err")" == 1 ]

expect_rc 0 "a quantity, an optional field, a set within the rules" kubectl create -f - <<<"$(w w-q '{"size":1,"limit":5,"mem":"512Mi","alias":"web","zones":["a","c"]}')"
expect_rc 1 "a quantity above the rule's bound" kubectl create -f - <<<"$(w w-q2 '{"size":1,"limit":5,"mem":"1.5Gi"}')"
check "... is refused (kube's quantity library)" err_text 'spec.mem: Invalid value: "string": mem is at most 1Gi'
expect_rc 1 "an alias that is no DNS label" kubectl create -f - <<<"$(w w-q3 '{"size":1,"limit":5,"alias":"Web_1"}')"
check "... is refused (optional field, format library)" err_text 'spec: Invalid value: "object": alias must be a DNS label'
expect_rc 1 "a zone outside the set" kubectl create -f - <<<"$(w w-q4 '{"size":1,"limit":5,"zones":["a","d"]}')"
check "... is refused (sets library)" err_text 'spec.zones: Invalid value: "array": zones are a b or c'
expect_rc 0 "an int-or-string the type() rule accepts, as an int" kubectl create -f - <<<"$(w w-t1 '{"size":1,"limit":5,"share":3}')"
expect_rc 0 "... and as a string" kubectl create -f - <<<"$(w w-t2 '{"size":1,"limit":5,"share":"25%"}')"
expect_rc 1 "a string that is no percentage" kubectl create -f - <<<"$(w w-t3 '{"size":1,"limit":5,"share":"many"}')"
check "... is refused (type() told it from an int; the value is kube's schema type, none)" err_text 'spec.share: Invalid value: "": share is a count or a percentage'
expect_rc 1 "a quantity that does not parse" kubectl create -f - <<<"$(w w-q5 '{"size":1,"limit":5,"mem":"lots"}')"
check "... is apimachinery's error in the rule's" err_text "spec.mem: Invalid value: \"string\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\$' evaluating rule: mem is at most 1Gi"

expect_rc 1 "a rule at the root (self.metadata.name)" kubectl create -f - <<<"$(w bad '{"size":1,"limit":5}')"
check "... is kube's 422 at <nil>, the value the schema's type" err_text 'The Widget "bad" is invalid: <nil>: Invalid value: "object": name must start with w-'

expect_rc 1 "a rule on spec" kubectl create -f - <<<"$(w w-b '{"size":1,"limit":5,"min":5,"max":1}')"
check "... names spec and says the message" err_text 'The Widget "w-b" is invalid: spec: Invalid value: "object": min must not exceed max'

expect_rc 1 "a rule that reads a missing field" kubectl create -f - <<<"$(w w-c '{"size":1}')"
check "... is cel-go's runtime error with the rule" err_text 'spec: Invalid value: "object": no such key: limit evaluating rule: self.size <= self.limit'

expect_rc 1 "a rule with a messageExpression" kubectl create -f - <<<"$(w w-m '{"size":150,"limit":200}')"
check "... says what the expression evaluates to" err_text 'spec: Invalid value: "object": size 150 is above 99'

expect_rc 1 "a rule and a messageExpression with format()" kubectl create -f - <<<"$(w w-f '{"size":1,"limit":5,"q":"bad"}')"
check "... formats as cel-go's string.format does" err_text 'spec: Invalid value: "object": q bad is refused (99.5% of 1234, [1])'

expect_rc 1 "a schema error kube calls blocking" kubectl create -f - <<<"$(w w-d '{"min":5,"max":1}')"
check "... runs no rule and says so after it" bash -c "grep -A1 -F '* spec.size: Required value' '$WORK/err' | grep -qF '* <nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'"

expect_rc 1 "a list rule with a macro and matches" kubectl create -f - <<<"$(w w-e '{"size":1,"limit":5,"tags":["ok","Not-OK"]}')"
check "... fails at the list" err_text 'spec.tags: Invalid value: "array": tags are lowercase words'

expect_rc 1 "a rule with reason FieldValueForbidden" kubectl create -f - <<<"$(w w-f '{"size":1,"limit":5,"replicas":-1}')"
check "... is a Forbidden cause" err_text 'spec.replicas: Forbidden: no negative replicas'

expect_rc 1 "several failures in one write" kubectl create -f - <<<"$(w w-g '{"size":1,"limit":5,"min":2,"max":1,"replicas":-2}')"
check "... are all listed, in kube's walk order" bash -c "grep -A1 -F '* spec: Invalid value: \"object\": min must not exceed max' '$WORK/err' | grep -qF '* spec.replicas: Forbidden: no negative replicas'"

expect_rc 0 "kube's IP, URL and duration functions" kubectl create -f - <<<"$(w w-h '{"size":1,"limit":5,"host":"example.com","endpoint":"https://example.com:8443/x","timeout":"30s"}')"
expect_rc 1 "... refusing what they should" kubectl create -f - <<<"$(w w-i '{"size":1,"limit":5,"host":"10.0.0.1","endpoint":"http://example.com","timeout":"1m"}')"
check "... isIP" err_text 'spec.host: Invalid value: "string": host is a name'
check "... url().getScheme()" err_text 'spec.endpoint: Invalid value: "string": endpoint is an https URL'
check "... getSeconds()" err_text 'spec.timeout: Invalid value: "string": at most 30s'

# transition rules
expect_rc 1 "changing an immutable field (self == oldSelf)" kubectl patch widget w-a --type=merge -p '{"spec":{"mode":"slow"}}'
check "... is refused" err_text 'The Widget "w-a" is invalid: spec.mode: Invalid value: "string": mode is immutable'
expect_rc 0 "a write that keeps it" kubectl patch widget w-a --type=merge -p '{"spec":{"size":2}}'
expect_rc 0 "removing it (the rule runs only where both values exist)" kubectl patch widget w-a --type=merge -p '{"spec":{"mode":null}}'
expect_rc 0 "setting it again (no old value: not evaluated)" kubectl patch widget w-a --type=merge -p '{"spec":{"mode":"slow"}}'
expect_rc 1 "a map list item changing what the rule keeps" kubectl patch widget w-a --type=merge -p '{"spec":{"ports":[{"name":"http","port":81}]}}'
check "... is refused at its index" err_text 'spec.ports[0]: Invalid value: "object": a named port keeps its number'
expect_rc 0 "items reordered and a new one added (correlated by key)" kubectl patch widget w-a --type=merge -p '{"spec":{"ports":[{"name":"https","port":443},{"name":"http","port":80}]}}'

# /status
expect_rc 1 "a level set below 1 (optionalOldSelf: the rule runs with no old value)" kubectl patch widget w-a --type=merge -p '{"spec":{"level":0}}'
check "... is refused" err_text 'spec.level: Invalid value: "integer": level starts at 1 and never drops'
expect_rc 0 "a level of 3" kubectl patch widget w-a --type=merge -p '{"spec":{"level":3}}'
expect_rc 1 "dropping it to 2 (oldSelf.orValue reads the old value)" kubectl patch widget w-a --type=merge -p '{"spec":{"level":2}}'
check "... is refused" err_text 'spec.level: Invalid value: "integer": level starts at 1 and never drops'
check "... and no warning says the rule was not evaluated" bash -c "! grep -q 'not evaluated.*orValue' '$WORK/err'"
expect_rc 1 "a status rule through /status" kubectl patch widget w-a --subresource=status --type=merge -p '{"status":{"phase":"Bogus"}}'
check "... is refused" err_text 'status: Invalid value: "object": unknown phase'
expect_rc 0 "a status the rule accepts" kubectl patch widget w-a --subresource=status --type=merge -p '{"status":{"phase":"Ready"}}'

# ratcheting: a rule added later does not refuse what an update keeps
expect_rc 0 "a widget with a long note" kubectl create -f - <<<"$(w w-old '{"size":1,"limit":5,"note":"a-long-note"}')"
widget_crd '              note:
                type: string
                x-kubernetes-validations:
                - {rule: "self.size() < 5", message: note is short}' >"$WORK/widget2.yaml"
expect_rc 0 "the CRD adds a rule the note breaks" kubectl apply -f "$WORK/widget2.yaml"
ok_ratchet() { kubectl patch widget w-old --type=merge -p '{"spec":{"size":2}}'; }
for i in 1 2 3 4 5 6 7 8 9 10; do
	run ok_ratchet
	[[ $RC == 0 ]] && break
	sleep 0.3
done
check "an update that keeps the note is accepted" [ "$RC" == 0 ]
check "... with kube's warning of the failed rule" err_text 'Warning: spec.note: Invalid value: "string": note is short'
expect_rc 1 "an update that changes the note into another long one" kubectl patch widget w-old --type=merge -p '{"spec":{"note":"another-long"}}'
check "... is refused" err_text 'spec.note: Invalid value: "string": note is short'
expect_rc 1 "a new widget with a long note" kubectl create -f - <<<"$(w w-new '{"size":1,"limit":5,"note":"a-long-note"}')"

# CRDs whose rules kube refuses when the CRD is written
bad_rules_crd() { # RULES-YAML (the x-kubernetes-validations list of spec)
	cat <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: integer}
            x-kubernetes-validations:
$1
YAML
}
bad_rules_crd "            - {rule: 'self.a =='}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule is not CEL" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused at the rule, the rule shown as kube shows it" err_text 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.a ==", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:10: Syntax error: unexpected end of expression'
check "... with the line and a caret under the place, as cel-go shows it" bash -c "grep -qxF ' | self.a ==' '$WORK/err' && grep -qxF ' | .........^' '$WORK/err'"
bad_rules_crd "            - {rule: 'other.a == 1'}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule names an undeclared variable" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused" err_text "undeclared reference to 'other'"
# kube 1.33 compiles a new rule for compatibility version 1.32, before
# its semver library (1.33): semver() and isSemver() are undeclared there
bad_rules_crd "            - {rule: \"isSemver('1.2.3')\"}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose new rule calls the semver library" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused, as kube 1.33 refuses it" err_text "compilation failed: ERROR: <input>:1:9: undeclared reference to 'isSemver' (in container '')"
bad_rules_crd "            - {rule: \"self.a.major() == 1\"}" >"$WORK/gadget.yaml"
expect_rc 1 "... or a semver's method" kubectl apply -f "$WORK/gadget.yaml"
check "... likewise" err_text "undeclared reference to 'major' (in container '')"
bad_rules_crd "            - {rule: 'self.b == 1'}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule reads a field the schema does not declare" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused, as kube's type checker refuses it" err_text "compilation failed: ERROR: <input>:1:5: undefined field 'b'"
check "... the caret under the selection's dot" bash -c "grep -qxF ' | self.b == 1' '$WORK/err' && grep -qxF ' | ....^' '$WORK/err'"
bad_rules_crd "            - {rule: \"self.a == 'abc'\"}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule compares an integer with a string" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused, as kube's type checker refuses it" err_text "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, string)'"
check "... the caret under the operator" bash -c "grep -qxF ' | .......^' '$WORK/err'"
# type conversions: cel-go's standard library declares each for a few
# argument types, as global functions alone
bad_rules_crd "            - {rule: \"bool(self.a)\"}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule converts an integer to bool" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused, as kube's type checker refuses it" err_text "compilation failed: ERROR: <input>:1:5: found no matching overload for 'bool' applied to '(int)'"
bad_rules_crd "            - {rule: \"string([self.a]) != ''\"}" >"$WORK/gadget.yaml"
expect_rc 1 "... or a list to string" kubectl apply -f "$WORK/gadget.yaml"
check "... likewise" err_text "compilation failed: ERROR: <input>:1:7: found no matching overload for 'string' applied to '(list(int))'"
bad_rules_crd "            - {rule: \"self.a.string() != ''\"}" >"$WORK/gadget.yaml"
expect_rc 1 "... or calls a conversion as a method" kubectl apply -f "$WORK/gadget.yaml"
check "... likewise (lapis warned, and skipped the rule on every write)" err_text "compilation failed: ERROR: <input>:1:14: found no matching overload for 'string' applied to 'int.()'"
bad_rules_crd "            - {rule: \"self.a.timestamp() == self.a\"}" >"$WORK/gadget.yaml"
expect_rc 1 "... or timestamp() as a method without an argument (it crashed the parser)" kubectl apply -f "$WORK/gadget.yaml"
check "... likewise" err_text "compilation failed: ERROR: <input>:1:17: found no matching overload for 'timestamp' applied to 'int.()'"
bad_rules_crd "            - {rule: \"self.a == 1 'éééééééééééééééééééééééééééééééééééééééé'\"}" >"$WORK/gadget.yaml"
expect_rc 1 "... or has a token more, which the message quotes cut to 64 bytes" kubectl apply -f "$WORK/gadget.yaml"
check "... cut between characters, not inside one (it was cut inside the 32nd)" err_text "compilation failed: ERROR: <input>:1:13: Syntax error: extraneous input ''ééééééééééééééééééééééééééééééé' expecting <EOF>"
bad_rules_crd "            - {rule: \"string(self.a) != '' && int('1') == 1 && timestamp(0) < timestamp('2000-01-01T00:00:00Z') && dyn(self) == self\"}" >"$WORK/gadget.yaml"
expect_rc 0 "... while the conversions the library declares are accepted" kubectl apply --dry-run=server -f "$WORK/gadget.yaml"
bad_rules_crd "            - {rule: 'self.a != null'}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule compares a field with null" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused: fields are never null to kube's checker" err_text "found no matching overload for '_!=_' applied to '(int, null)'"
bad_rules_crd "            - {rule: \"[1, 'a'].size() == 2\"}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule has a list literal of mixed types" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused" err_text "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'"
bad_rules_crd "            - {rule: \"string(self.a).find(')') == ''\"}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule has a find() pattern Go's regexp refuses" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused when kube builds the program" err_text "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: program instantiation failed: error parsing regexp: unexpected ): \`)\`"
bad_rules_crd "            - {rule: 'self.a < 1.5 && self.a >= 0'}" >"$WORK/gadget.yaml"
expect_rc 0 "a CRD whose rule orders an integer against a double is accepted (cross-type comparisons)" kubectl apply -f "$WORK/gadget.yaml"
bad_rules_crd "            - {rule: 'self.a < 1.5 && self.a >= 0'}
            - {rule: \"isSemver('1.2.3')\"}" >"$WORK/gadget.yaml"
expect_rc 1 "an update adding a rule that calls the semver library" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused: the rule is new to the CRD" err_text "x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{Rule:\"isSemver('1.2.3')\""
bad_rules_crd "            - {rule: 'self.a > 0', reason: Sometimes}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule has an unknown reason" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused with the supported values" err_text 'x-kubernetes-validations[0].reason: Unsupported value: "Sometimes": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'
bad_rules_crd "            - {rule: '  '}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD with an empty rule" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused" err_text 'x-kubernetes-validations[0].rule: Required value: rule is not specified'
bad_rules_crd "            - {rule: 'self.a > 0', message: \"two\\nlines\"}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose rule message has a line break" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused" err_text 'x-kubernetes-validations[0].message: Invalid value: "two\nlines": message must not contain line breaks'
bad_rules_crd "            - {rule: 'self.a > 0', optionalOldSelf: true}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD with optionalOldSelf on a rule without oldSelf" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused" err_text 'x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule'
bad_rules_crd "            - {rule: 'oldSelf.a + self.a > 5', optionalOldSelf: true}" >"$WORK/gadget.yaml"
expect_rc 1 "a CRD whose optionalOldSelf rule uses oldSelf as the value itself" kubectl apply -f "$WORK/gadget.yaml"
check "... is refused: oldSelf is an optional there (kube's TestOptionalOldSelfIsOptionalType)" err_text "compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(optional_type(int), int)'"
bad_rules_crd "            - {rule: 'oldSelf.a.orValue(0) <= self.a', optionalOldSelf: true}" >"$WORK/gadget.yaml"
expect_rc 0 "... while one reading it through orValue() is accepted" kubectl apply -f "$WORK/gadget.yaml"
bad_rules_crd "            - {rule: \"url('https://a.example/') == url('https://a.example/')\"}" >"$WORK/gadget.yaml"
expect_rc 0 "a CRD whose rule is CEL outside lapis's subset is accepted" kubectl apply -f "$WORK/gadget.yaml"
# a time zone by name, read as Go's LoadLocation reads it
bad_rules_crd "            - {rule: \"timestamp('2024-01-01T00:00:00Z').getHours('America/New_York') == 19 && (self.a != 1 || timestamp('2024-01-01T00:00:00Z').getHours('Nope/Zone') == 0)\"}" >"$WORK/gadget.yaml"
expect_rc 0 "a CRD whose rule reads the hour in named time zones" kubectl apply -f "$WORK/gadget.yaml"
expect_rc 0 "... an object it accepts (New York's hour 19 at 00:00Z)" kubectl create --dry-run=server -f - <<<'{"apiVersion":"cel.example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"a":2}}'
expect_rc 1 "... an unknown zone fails the rule" kubectl create --dry-run=server -f - <<<'{"apiVersion":"cel.example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"a":1}}'
check "... in Go's words" err_text "unknown time zone Nope/Zone evaluating rule:"

# The head of a CRD of group t.example.com ($1 plural, $2 kind) up to its
# schema's root properties; the test writes what follows.
t_crd() {
	cat <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: $1.t.example.com}
spec:
  group: t.example.com
  scope: Namespaced
  names: {plural: $1, kind: $2}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
YAML
}

# kube's regex library: find() and findAll() (Karpenter's restricted label domains)
{ t_crd finds Find; cat <<'EOF'
          spec:
            type: object
            properties:
              key:
                type: string
                x-kubernetes-validations:
                - rule: '!self.find("^([^/]+)").endsWith("karpenter.sh")'
                  message: label domain "karpenter.sh" is restricted
                - rule: 'self.findAll("[0-9]+").size() <= 1'
                  message: at most one number
EOF
} >"$WORK/finds.yaml"
expect_rc 0 "a CRD whose rules use find() and findAll()" kubectl apply -f "$WORK/finds.yaml"
kubectl wait --for=condition=Established crd/finds.t.example.com --timeout=20s >/dev/null 2>&1
find_cr() { printf '{"apiVersion":"t.example.com/v1","kind":"Find","metadata":{"name":"%s"},"spec":{"key":"%s"}}' "$1" "$2"; }
expect_rc 1 "a key in the restricted domain with two numbers" kubectl create -f - <<<"$(find_cr f1 karpenter.sh/a1b2)"
check "... is refused by both rules" err_text '* spec.key: Invalid value: "string": label domain "karpenter.sh" is restricted'
check "... the second one too" err_text '* spec.key: Invalid value: "string": at most one number'
expect_rc 0 "a key both rules accept" kubectl create -f - <<<"$(find_cr f2 example.com/karpenter.sh1)"
check "... with no warning" bash -c "! grep -q 'not evaluated' '$WORK/err'"

# A reserved word names a field after a '.': JobSet's rule on its
# templates' metadata.namespace (kube 1.31 on finds it unescaped), with
# JobSet's maxItems, without which kube's cost budget refuses it (1.15x).
{ t_crd kws Kw; cat <<'EOF'
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)"
              message: namespace cannot be set
            - rule: "!has(self.__namespace__) || self.namespace == self.__namespace__"
            properties:
              namespace: {type: string}
              templates:
                type: array
                maxItems: 50
                items:
                  type: object
                  properties:
                    metadata:
                      type: object
                      properties:
                        namespace: {type: string}
EOF
} >"$WORK/kw.yaml"
expect_rc 0 "a CRD whose rules select a field named by a reserved word (namespace)" kubectl apply -f "$WORK/kw.yaml"
kubectl wait --for=condition=Established crd/kws.t.example.com --timeout=20s >/dev/null 2>&1
kw_cr() { printf '{"apiVersion":"t.example.com/v1","kind":"Kw","metadata":{"name":"%s"},"spec":%s}' "$1" "$2"; }
expect_rc 0 "an object the rule accepts" kubectl create -f - <<<"$(kw_cr k1 '{"namespace":"a","templates":[{"metadata":{}}]}')"
expect_rc 1 "a template with a namespace" kubectl create -f - <<<"$(kw_cr k2 '{"templates":[{"metadata":{"namespace":"x"}}]}')"
check "... is refused by the rule" err_text 'spec: Invalid value: "object": namespace cannot be set'
expect_rc 1 "a bare reserved word in a rule" kubectl apply -f - <<<"$(sed 's/self.templates.all/namespace == 0 \&\& self.templates.all/' "$WORK/kw.yaml")"
check "... is a compile error, as cel-go's" err_has "reserved identifier"

# A transition rule under an atomic list's items can never run: kube
# refuses the CRD, naming the list (under spec.validation, where kube puts
# the schema all versions share).
{ t_crd uncorrs Uncorr; cat <<'EOF'
          spec:
            type: object
            properties:
              l:
                type: array
                maxItems: 16
                items:
                  type: object
                  properties:
                    a:
                      type: string
                      maxLength: 64
                      x-kubernetes-validations:
                      - rule: self == oldSelf
EOF
} >"$WORK/uncorr.yaml"
expect_rc 1 "a transition rule under an atomic list's items" kubectl apply -f "$WORK/uncorr.yaml"
check "... is refused as kube refuses it" err_text 'spec.validation.openAPIV3Schema.properties[spec].properties[l].items.properties[a].x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[l]'
expect_rc 0 "... and accepted on a map list's items" kubectl apply -f - <<<"$(sed 's/                type: array/                type: array\n                x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys: [a]/; s/                  type: object/                  type: object\n                  required: [a]/' "$WORK/uncorr.yaml")"

# kube's cost budget: a rule estimated past it a hundredfold is refused with
# kube's words; bounds (maxItems, maxLength) bring the same rule under it
{ t_crd costly Costly; cat <<'EOF'
          spec:
            type: object
            properties:
              names:
                type: array
                items:
                  type: string
                  x-kubernetes-validations:
                  - rule: "self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')"
EOF
} >"$WORK/costly.yaml"
expect_rc 1 "a CRD whose rule kube estimates far over its cost budget" kubectl apply -f "$WORK/costly.yaml"
check "... is refused with kube's cause" err_text 'spec.validation.openAPIV3Schema.properties[spec].properties[names].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)'
expect_rc 1 "... bounding its strings alone" kubectl apply -f - <<<"$(sed 's/                  type: string/                  type: string\n                  maxLength: 63/' "$WORK/costly.yaml")"
check "... still passes the budget, by kube's own factor (183 for each of 1048576 strings)" err_text 'x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 19.2x (try simplifying'
expect_rc 0 "... and accepted once the list and its strings are bounded" kubectl apply -f - <<<"$(sed 's/                type: array/                type: array\n                maxItems: 64/; s/                  type: string/                  type: string\n                  maxLength: 63/' "$WORK/costly.yaml")"
# an int-or-string is sized as the largest request whatever its maxLength
# (kube's SchemaDeclType): its rule over 100 of them is past the budget
expect_rc 1 "a rule over bounded int-or-string items" kubectl apply -f - <<<"$(sed 's/                type: array/                type: array\n                maxItems: 100/; s/                  type: string/                  x-kubernetes-int-or-string: true\n                  maxLength: 10/; s/- rule: .*/- rule: "type(self) != string || self.matches('"'"'^[a-z]+$'"'"')"/' "$WORK/costly.yaml")"
check "... is refused by kube's estimate, its maxLength not counted" err_text 'x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 9.4x (try simplifying'

# the real VolumeSnapshot CRD (external-snapshotter)
# Every cause, as kube's NewInvalid lists them (lapis kept 16), and a
# messageExpression's result of a few KiB whole (lapis cut it at 2 KiB).
kubectl create -f - >/dev/null <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: tallies.cel.example.com}
spec:
  group: cel.example.com
  scope: Namespaced
  names: {plural: tallies, singular: tally, kind: Tally}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              m: {type: object, additionalProperties: {type: integer, maximum: 5}}
              s:
                type: string
                maxLength: 4000
                x-kubernetes-validations:
                - rule: "self.size() < 10"
                  messageExpression: "'too long: ' + self"
YAML
expect_rc 0 "a CRD with a map of bounded numbers" kubectl wait --for=condition=Established crd/tallies.cel.example.com --timeout=20s
m=$(python3 -c 'import json; print(json.dumps({"k%02d" % i: 100 + i for i in range(40)}))')
expect_rc 1 "40 members over their maximum" kubectl create -f - <<<"{\"apiVersion\":\"cel.example.com/v1\",\"kind\":\"Tally\",\"metadata\":{\"name\":\"t1\",\"namespace\":\"default\"},\"spec\":{\"m\":$m}}"
check "... are 40 causes, the last one too" bash -c "[[ \$(grep -c '^\* spec.m.k[0-9][0-9]: Invalid value: 1[0-9][0-9]: spec.m.k[0-9][0-9] in body should be less than or equal to 5' '$WORK/err') == 40 ]] && grep -qF '* spec.m.k39: Invalid value: 139:' '$WORK/err'"
long=$(printf 'x%.0s' $(seq 3000))
expect_rc 1 "a messageExpression of 3,000 bytes" kubectl create -f - <<<"{\"apiVersion\":\"cel.example.com/v1\",\"kind\":\"Tally\",\"metadata\":{\"name\":\"t2\",\"namespace\":\"default\"},\"spec\":{\"s\":\"$long\"}}"
check "... is the message whole" err_text "spec.s: Invalid value: \"string\": too long: ${long}"

# has() over an optional chain is cel-go's presence test on an optional
# (false for none, else the test on its value), and a format: duration
# string converts as kube-openapi's strfmt.ParseDuration (CrunchyData's
# PostgresCluster: its ssl_groups rule and retentionPeriod values)
{ t_crd pgs Pg; cat <<'EOF'
          spec:
            type: object
            x-kubernetes-validations:
            - rule: '!has(self.?config.parameters.ssl_groups) || self.version > 17'
              message: ssl_groups needs 18
            properties:
              version: {type: integer}
              config: {type: object, properties: {parameters: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}}}
              retention: {type: string, format: duration, x-kubernetes-validations: [{rule: 'self >= duration("1h")', message: at least an hour}]}
EOF
} >"$WORK/pgs.yaml"
expect_rc 0 "a CRD with has() over .? and a duration rule" kubectl apply -f "$WORK/pgs.yaml"
kubectl wait --for=condition=Established crd/pgs.t.example.com --timeout=20s >/dev/null 2>&1
pg() { printf '{"apiVersion":"t.example.com/v1","kind":"Pg","metadata":{"name":"%s","namespace":"default"},"spec":%s}' "$1" "$2"; }
expect_rc 0 "no config: has() is false" kubectl create --dry-run=server -f - <<<"$(pg p1 '{"version":16}')"
expect_rc 0 "... nor parameters" kubectl create --dry-run=server -f - <<<"$(pg p1 '{"version":16,"config":{}}')"
expect_rc 0 "... other parameters" kubectl create --dry-run=server -f - <<<"$(pg p1 '{"version":16,"config":{"parameters":{"a":"b"}}}')"
expect_rc 1 "ssl_groups at 16" kubectl create --dry-run=server -f - <<<"$(pg p1 '{"version":16,"config":{"parameters":{"ssl_groups":"x"}}}')"
check "... fails the rule, no field selection error" err_text 'The Pg "p1" is invalid: spec: Invalid value: "object": ssl_groups needs 18'
for d in '28 weeks' '1 hr' 'PT1D2H' '90 DAY' '1 week 2 days' '2h'; do
	expect_rc 0 "a retention of $d" kubectl create --dry-run=server -f - <<<"$(pg p2 "{\"retention\":\"$d\"}")"
done
expect_rc 1 "a retention of 5 min" kubectl create --dry-run=server -f - <<<"$(pg p2 '{"retention":"5 min"}')"
check "... fails the rule" err_text 'spec.retention: Invalid value: "string": at least an hour'
# cel-go's macro errors: at the argument, without "Syntax error: "
bad_rules_crd "            - {rule: 'has(self.?a)'}" >"$WORK/gadget.yaml"
expect_rc 1 "has() of an optional select" kubectl apply -f "$WORK/gadget.yaml"
check "... is the has() macro's error, at the argument" err_text 'compilation failed: ERROR: <input>:1:9: invalid argument to has() macro'
bad_rules_crd "            - {rule: 'self.all(1, true)'}" >"$WORK/gadget.yaml"
expect_rc 1 "a quantifier whose variable is no name" kubectl apply -f "$WORK/gadget.yaml"
check "... in cel-go's words" err_text 'compilation failed: ERROR: <input>:1:10: argument must be a simple name'
bad_rules_crd "            - {rule: 'self.map(1, true)'}" >"$WORK/gadget.yaml"
expect_rc 1 "map() whose variable is no name" kubectl apply -f "$WORK/gadget.yaml"
check "... in cel-go's words" err_text 'compilation failed: ERROR: <input>:1:10: argument is not an identifier'

# what follows .? is type-checked as cel-go's checkOptSelect does: the
# field must exist, and the optional is no plain value
bad_rules_crd "            - {rule: 'self.?b.hasValue()'}" >"$WORK/gadget.yaml"
expect_rc 1 "an optional select of an undefined field" kubectl apply -f "$WORK/gadget.yaml"
check "... is undefined" err_text "compilation failed: ERROR: <input>:1:5: undefined field 'b'"
bad_rules_crd "            - {rule: 'self.?a == 1'}" >"$WORK/gadget.yaml"
expect_rc 1 "an optional compared with a plain value" kubectl apply -f "$WORK/gadget.yaml"
check "... has no overload" err_text "compilation failed: ERROR: <input>:1:9: found no matching overload for '_==_' applied to '(optional_type(int), int)'"
bad_rules_crd "            - {rule: 'self.?a.orValue(\"\") == \"\"'}" >"$WORK/gadget.yaml"
expect_rc 1 "orValue of another type" kubectl apply -f "$WORK/gadget.yaml"
check "... has no overload" err_text "found no matching overload for 'orValue' applied to 'optional_type(int).(string)'"
bad_rules_crd "            - {rule: 'self.?l[?0].orValue(1) == 1'}" >"$WORK/gadget.yaml"
sed -i 's/              a: {type: integer}/              a: {type: integer}\n              l: {type: array, maxItems: 4, items: {type: string}}/' "$WORK/gadget.yaml"
expect_rc 1 "an element taken with [?] is an optional of the element's type" kubectl apply -f "$WORK/gadget.yaml"
check "... so orValue of another type has no overload" err_text "found no matching overload for 'orValue' applied to 'optional_type(string).(int)'"

# a rule's fieldPath into a map (additionalProperties) names the member as
# kube's ValidFieldPath does, a Key: spec.m[k]; a property stays spec.o.a.b
expect_rc 0 "a CRD whose rules point into a map and at a dotted property" kubectl apply -f - <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: fps.t.example.com}
spec:
  group: t.example.com
  names: {plural: fps, kind: Fp}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              m: {type: object, additionalProperties: {type: string}}
              o: {type: object, properties: {a.b: {type: string}}}
            x-kubernetes-validations:
            - {rule: "false", message: m1, fieldPath: ".m.k"}
            - {rule: "false", message: m2, fieldPath: ".m['a.b']"}
            - {rule: "false", message: m3, fieldPath: ".o['a.b']"}
YAML
expect_rc 0 "... established" kubectl wait --for=condition=Established crd/fps.t.example.com --timeout=20s
expect_rc 1 "its object" kubectl create -f - <<<'{"apiVersion":"t.example.com/v1","kind":"Fp","metadata":{"name":"f1"},"spec":{}}'
check "... names the map's members as keys and the property as fields" eval 'err_text "* spec.m[k]: Invalid value: \"object\": m1" && err_text "* spec.m[a.b]: Invalid value: \"object\": m2" && err_text "* spec.o.a.b: Invalid value: \"object\": m3"'

TD=$(cd "$(dirname "$0")/../.." && pwd)/../shared/testdata/crds
[[ -d $TD ]] || TD=/work/shared/testdata/crds
if [[ -d $TD/external-snapshotter ]]; then
	ES=$TD/external-snapshotter
	expect_rc 0 "the VolumeSnapshot CRD" kubectl apply -f "$ES/snapshot.storage.k8s.io_volumesnapshots.yaml"
	expect_rc 0 "... is Established" kubectl wait --for=condition=Established crd/volumesnapshots.snapshot.storage.k8s.io --timeout=20s
	expect_rc 1 "its invalid example (both sources set)" kubectl create -f "$ES/invalid/volumesnapshot__invalid-snapshot-v1.yaml"
	check "... is refused by its rule" err_text 'The VolumeSnapshot "new-snapshot-demo-v1" is invalid: spec.source: Invalid value: "object": exactly one of volumeSnapshotContentName and persistentVolumeClaimName must be set'
	expect_rc 0 "its valid example" kubectl create -f "$ES/examples/volumesnapshot__snapshot-v1.yaml"
	check "... with no warning" bash -c "! grep -q x-kubernetes-validations '$WORK/err'"
	expect_rc 1 "changing its source (a transition rule)" kubectl patch volumesnapshot new-snapshot-demo-v1 --type=merge -p '{"spec":{"source":{"persistentVolumeClaimName":"other"}}}'
	check "... is refused" err_text 'spec.source.persistentVolumeClaimName: Invalid value: "string": persistentVolumeClaimName is immutable'
	expect_rc 1 "an empty class name" kubectl patch volumesnapshot new-snapshot-demo-v1 --type=merge -p '{"spec":{"volumeSnapshotClassName":""}}'
	check "... is refused" err_text 'spec.volumeSnapshotClassName: Invalid value: "string": volumeSnapshotClassName must not be the empty string when set'
fi
e2e_finish
