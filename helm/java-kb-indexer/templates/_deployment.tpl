{{/*
The Deployment of one component, web or worker: (dict "root" $ "component" "web" "port" 8080 "readiness" "/readyz").
Both serve HTTP on one port: the web app on web.port, the worker its /healthz on worker.healthPort.
*/}}
{{- define "javakb.deployment" -}}
{{- $root := .root -}}
{{- $values := index $root.Values .component -}}
{{- $scaled := or $values.autoscaling.enabled (and (eq .component "worker") $root.Values.worker.keda.enabled) -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "javakb.fullname" $root }}-{{ .component }}
  labels: {{- include "javakb.labels" . | nindent 4 }}
spec:
  {{- if not $scaled }}
  replicas: {{ $values.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels: {{- include "javakb.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels: {{- include "javakb.selectorLabels" . | nindent 8 }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- include "javakb.checksum" $root | nindent 8 }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "javakb.podCommon" $root | nindent 6 }}
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds }}
      {{- with $values.topologySpreadConstraints }}
      topologySpreadConstraints: {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "javakb.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .component | quote }}]
          ports:
            - {name: http, containerPort: {{ .port }}, protocol: TCP}
          {{- include "javakb.env" (dict "root" $root "configMap" (include "javakb.fullname" $root) "secret" (include "javakb.secretName" $root)) | nindent 10 }}
          {{- with $values.startupProbe }}{{ if .enabled }}
          startupProbe: {{- include "javakb.probe" (dict "probe" . "path" "/healthz" "port" "http") | nindent 12 }}
          {{- end }}{{ end }}
          {{- with $values.livenessProbe }}{{ if .enabled }}
          livenessProbe: {{- include "javakb.probe" (dict "probe" . "path" "/healthz" "port" "http") | nindent 12 }}
          {{- end }}{{ end }}
          {{- $readiness := .readiness }}
          {{- with $values.readinessProbe }}{{ if .enabled }}
          readinessProbe: {{- include "javakb.probe" (dict "probe" . "path" $readiness "port" "http") | nindent 12 }}
          {{- end }}{{ end }}
          {{- if $values.preStopSleepSeconds }}
          lifecycle:
            # Endpoints are removed asynchronously: keep answering while load balancers catch up.
            preStop:
              exec: {command: ["python3", "-c", "import time; time.sleep({{ $values.preStopSleepSeconds }})"]}
          {{- end }}
          securityContext: {{- toYaml $root.Values.securityContext | nindent 12 }}
          resources: {{- toYaml $values.resources | nindent 12 }}
          {{- include "javakb.volumeMounts" $root | nindent 10 }}
      {{- include "javakb.volumes" $root | nindent 6 }}
{{- end -}}

{{/* A PodDisruptionBudget and an HPA of one component: (dict "root" $ "component" "web"). */}}
{{- define "javakb.availability" -}}
{{- $root := .root -}}
{{- $values := index $root.Values .component -}}
{{- if $values.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "javakb.fullname" $root }}-{{ .component }}
  labels: {{- include "javakb.labels" . | nindent 4 }}
spec:
  {{- if $values.pdb.maxUnavailable }}
  maxUnavailable: {{ $values.pdb.maxUnavailable }}
  {{- else }}
  minAvailable: {{ $values.pdb.minAvailable }}
  {{- end }}
  selector:
    matchLabels: {{- include "javakb.selectorLabels" . | nindent 6 }}
{{- end }}
{{- if $values.autoscaling.enabled }}
{{- if not (or $values.autoscaling.targetCPUUtilizationPercentage $values.autoscaling.targetMemoryUtilizationPercentage) }}
{{- fail (printf "%s.autoscaling: set targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage above 0" .component) }}
{{- end }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "javakb.fullname" $root }}-{{ .component }}
  labels: {{- include "javakb.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "javakb.fullname" $root }}-{{ .component }}
  minReplicas: {{ $values.autoscaling.minReplicas }}
  maxReplicas: {{ $values.autoscaling.maxReplicas }}
  metrics:
    {{- with $values.autoscaling.targetCPUUtilizationPercentage }}
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: {{ . }}}}
    {{- end }}
    {{- with $values.autoscaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource: {name: memory, target: {type: Utilization, averageUtilization: {{ . }}}}
    {{- end }}
{{- end }}
{{- end -}}
