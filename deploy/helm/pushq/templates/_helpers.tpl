{{/* The release's name for every object: "<release>-pushq", or the release name when it already says pushq. */}}
{{- define "pushq.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "pushq.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component (worker, serve, migrate): pass (dict "root" $ "component" "worker"). */}}
{{- define "pushq.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "pushq.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The Secret holding PUSHQ_DATABASE_URL, and its key. */}}
{{- define "pushq.databaseSecret" -}}
{{- .Values.database.existingSecret | default (printf "%s-database" (include "pushq.fullname" .)) -}}
{{- end -}}
{{- define "pushq.databaseSecretKey" -}}
{{- if .Values.database.existingSecret }}{{ .Values.database.existingSecretKey }}{{ else }}url{{ end -}}
{{- end -}}

{{/* PUSHQ_DATABASE_URL of serve or the workers (pass (dict "root" $ "component" "serve")): their own
     role's URL when <component>.database names one (its existingSecret, or its url kept in the
     Secret <fullname>-database-roles), else the owner's, database.*. */}}
{{- define "pushq.componentDatabaseEnv" -}}
{{- $own := index .root.Values .component "database" -}}
{{- if $own.existingSecret -}}
- name: PUSHQ_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $own.existingSecret }}
      key: {{ $own.existingSecretKey }}
{{- else if $own.url -}}
- name: PUSHQ_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "pushq.fullname" .root }}-database-roles
      key: {{ .component }}-url
{{- else -}}
{{ include "pushq.databaseEnv" .root }}
{{- end -}}
{{- end -}}

{{/* The Secret of the provider credentials' files and variables. */}}
{{- define "pushq.credentialsSecret" -}}
{{- .Values.credentials.existingSecret | default (printf "%s-credentials" (include "pushq.fullname" .)) -}}
{{- end -}}

{{/* PUSHQ_DATABASE_URL from its Secret: the first entry of every container's env. */}}
{{- define "pushq.databaseEnv" -}}
- name: PUSHQ_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "pushq.databaseSecret" . }}
      key: {{ include "pushq.databaseSecretKey" . }}
{{- end -}}

{{/* A map of variables as env entries, sorted by name: pass (dict "env" .Values.worker.env "reserved" (list …)). */}}
{{- define "pushq.plainEnv" -}}
{{- $reserved := .reserved -}}
{{- range $name, $value := .env }}
{{- if has $name $reserved }}
{{- fail (printf "%s is set by the chart; remove it from the values" $name) }}
{{- end }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* What every pod of the chart shares: pull secrets, no service account token, the pod security context. */}}
{{- define "pushq.podCommon" -}}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* The Secret of the variables that hold secrets; empty when there is none. */}}
{{- define "pushq.credentialsEnvSecret" -}}
{{- if .Values.credentials.existingEnvSecret -}}
{{- .Values.credentials.existingEnvSecret -}}
{{- else if .Values.credentials.env -}}
{{- printf "%s-credentials-env" (include "pushq.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The variable that tells `pushq serve` a proxy in front terminates TLS (its name in docs/configuration.md). */}}
{{- define "pushq.serveProxyVariable" -}}PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY{{- end -}}

{{/* "HTTPS" when serve terminates TLS itself, else "HTTP": its probes' scheme. */}}
{{- define "pushq.serveScheme" -}}{{ if .Values.serve.tls.secretName }}HTTPS{{ else }}HTTP{{ end }}{{- end -}}
