{{- define "javakb.name" -}}{{ .Release.Name }}-java-kb{{- end -}}
{{- define "javakb.labels" -}}
app.kubernetes.io/name: java-kb-indexer
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
{{- define "javakb.env" -}}
envFrom:
  - configMapRef:
      name: {{ include "javakb.name" . }}
  - secretRef:
      name: {{ .Values.existingSecret }}
{{- end -}}
