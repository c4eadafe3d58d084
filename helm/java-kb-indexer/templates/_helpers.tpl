{{/* Names: the chart's name, and the release's full name (both overridable, 63 characters at most). */}}
{{- define "javakb.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "javakb.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "javakb.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "web"). */}}
{{- define "javakb.selectorLabels" -}}
app.kubernetes.io/name: {{ include "javakb.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Every object's labels: the standard ones, the component's, and commonLabels. */}}
{{- define "javakb.labels" -}}
helm.sh/chart: {{ include "javakb.chart" .root }}
{{ include "javakb.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: java-kb-indexer
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "javakb.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "javakb.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "javakb.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The secrets: either an existing Secret or one the chart makes from secrets.values, never both. */}}
{{- define "javakb.secretName" -}}
{{- if and .Values.secrets.existingSecret .Values.secrets.values -}}
{{- fail "secrets: set either secrets.existingSecret (a Secret you made) or secrets.values (a Secret the chart makes), not both" -}}
{{- end -}}
{{- if .Values.secrets.existingSecret -}}
{{- .Values.secrets.existingSecret -}}
{{- else if .Values.secrets.values -}}
{{- include "javakb.fullname" . -}}
{{- end -}}
{{- end -}}

{{/*
Values without which no pod can work, checked at render time (`helm template`/`install` fail naming them):
the PostgreSQL DSN, from an existing Secret (whose content the chart cannot see), secrets.values or config.
Its default (127.0.0.1) is never right inside a pod.
*/}}
{{- define "javakb.required" -}}
{{- if not (or .Values.secrets.existingSecret (hasKey .Values.secrets.values "JAVAKB_POSTGRES__DSN") (hasKey .Values.config "JAVAKB_POSTGRES__DSN")) -}}
{{- fail "JAVAKB_POSTGRES__DSN is required: set secrets.existingSecret (a Secret holding JAVAKB_POSTGRES__DSN) or secrets.values.JAVAKB_POSTGRES__DSN; its default, 127.0.0.1, is never right inside a pod (docs/deploy-kubernetes.md, section 3)" -}}
{{- end -}}
{{- end -}}

{{/* The non-secret environment: what the chart derives, then config (config wins). */}}
{{- define "javakb.configData" -}}
JAVAKB_HOST: "0.0.0.0"
JAVAKB_PORT: {{ .Values.web.port | quote }}
JAVAKB_WORKER__HEALTH_PORT: {{ .Values.worker.healthPort | quote }}
JAVAKB_WORKER__MAX_JOBS: {{ .Values.worker.maxJobs | quote }}
JAVAKB_WORKER__PARSE_PROCESSES: {{ .Values.worker.parseProcesses | quote }}
{{- range $key, $value := .Values.config }}
{{ $key }}: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{- define "javakb.secretData" -}}
{{- range $key, $value := .Values.secrets.values }}
{{ $key }}: {{ $value | toString | b64enc | quote }}
{{- end }}
{{- end -}}

{{/* Rolls the pods when configuration or chart-made secrets change. */}}
{{- define "javakb.checksum" -}}
checksum/config: {{ printf "%s\n%s\n%s" (include "javakb.configData" .) (include "javakb.secretData" .) (include "javakb.secretName" .) | sha256sum }}
{{- end -}}

{{/* env and envFrom of every container: (dict "root" $ "configMap" NAME "secret" NAME). */}}
{{- define "javakb.env" -}}
envFrom:
  - configMapRef:
      name: {{ .configMap }}
  {{- if .secret }}
  - secretRef:
      name: {{ .secret }}
      optional: false
  {{- end }}
  {{- with .root.Values.extraEnvFrom }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .root.Values.extraEnv }}
env: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The pod-level settings every pod of the chart shares. */}}
{{- define "javakb.podCommon" -}}
serviceAccountName: {{ include "javakb.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
securityContext: {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Volumes: a writable /tmp (the root file system is read-only), then extraVolumes. */}}
{{- define "javakb.volumes" -}}
volumes:
  - name: tmp
    emptyDir: {sizeLimit: {{ .Values.tmpSizeLimit }}}
  {{- with .Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{- define "javakb.volumeMounts" -}}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  {{- with .Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* A probe: the handler, then the tunables of values (enabled is ours, not Kubernetes'). */}}
{{- define "javakb.probe" -}}
{{- $tunables := omit .probe "enabled" -}}
httpGet: {path: {{ .path }}, port: {{ .port }}}
{{ toYaml $tunables }}
{{- end -}}

{{/*
Egress rules: DNS, then each named target of networkPolicy.egress on its ports, to its peers when given
(a rule without peers allows those ports to any destination: give `to` to pin one down).
*/}}
{{- define "javakb.egress" -}}
{{- if .np.egress.dns }}
- ports: [{port: 53, protocol: UDP}, {port: 53, protocol: TCP}]
{{- end }}
{{- range .targets }}
{{- $target := index $.np.egress . }}
- ports: {{- toYaml $target.ports | nindent 4 }}
  {{- with $target.to }}
  to: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}
