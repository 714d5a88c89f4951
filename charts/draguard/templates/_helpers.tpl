{{/* Labels of every object: the kustomize base's two, plus Helm's own. */}}
{{- define "draguard.labels" -}}
app.kubernetes.io/name: draguard
{{ include "draguard.commonLabels" . }}
{{- end }}

{{/* What kustomize's `labels:` adds to every object (the Namespace has only these), plus Helm's. */}}
{{- define "draguard.commonLabels" -}}
app.kubernetes.io/part-of: draguard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* What the Service, the PDB, the spread constraints and the NetworkPolicy select. */}}
{{- define "draguard.selector" -}}
app.kubernetes.io/name: draguard
{{- end }}

{{/* The certificate mode, checked (the schema says the same; this guards --disable-openapi-validation). */}}
{{- define "draguard.certMode" -}}
{{- $mode := .Values.certificates.mode -}}
{{- if not (has $mode (list "given" "cert-manager" "self-managed")) -}}
{{- fail (printf "certificates.mode must be given, cert-manager or self-managed, not %q" $mode) -}}
{{- end -}}
{{- $mode -}}
{{- end }}

{{/* What denies: .Values.deny as `--deny=` takes it (`none` for an empty list); unset (null), the
code's own default, which the chart does not pass (so it cannot drift from it) and only names here
for NOTES — tests/doors/test_defaults_agree.py compares this text with the code's DEFAULT_DENY. */}}
{{- define "draguard.defaultDeny" -}}
Unsatisfiable,SelectorRuntimeError
{{- end }}

{{- define "draguard.deny" -}}
{{- if not (kindIs "slice" .Values.deny) -}}
{{- include "draguard.defaultDeny" . -}}
{{- else if .Values.deny -}}
{{- join "," .Values.deny -}}
{{- else -}}
none
{{- end -}}
{{- end }}

{{/* The clientConfig of every webhook; caBundle only where nobody else owns it. */}}
{{- define "draguard.clientConfig" -}}
clientConfig:
  service:
    name: draguard
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- if eq (include "draguard.certMode" .root) "given" }}
  caBundle: {{ .root.Values.certificates.caBundle | quote }}
  {{- end }}
{{- end }}

{{/* Claims' namespaceSelector: kube-system, and draguard's own namespace (by label when the
chart makes it, by name otherwise). */}}
{{- define "draguard.namespaceSelector" -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      {{- if .Values.namespace.create }}
      values: ["kube-system"]
      {{- else }}
      values: ["kube-system", {{ .Release.Namespace | quote }}]
      {{- end }}
    - key: admission.draguard.dev/skip
      operator: DoesNotExist
{{- end }}

{{/* cert-manager's cainjector reads this annotation. */}}
{{- define "draguard.webhookAnnotations" -}}
{{- if eq (include "draguard.certMode" .) "cert-manager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ printf "%s/draguard-serving" .Release.Namespace }}
{{- end }}
{{- end }}

{{/* Labels of the audit's objects (manifests/components/audit), plus Helm's own. */}}
{{- define "draguard.auditLabels" -}}
app.kubernetes.io/name: draguard-audit
{{ include "draguard.commonLabels" . }}
{{- end }}
