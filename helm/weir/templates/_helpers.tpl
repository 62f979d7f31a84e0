{{/*
Names and labels shared by every template. Resource names are <fullname>-<component>, cut to
63 characters, the limit of a DNS label.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "weir.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's base name: fullnameOverride, else <release>-<chart> (just <release> when it contains the chart's name). */}}
{{- define "weir.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* <fullname>-controlplane */}}
{{- define "weir.controlPlane.fullname" -}}
{{- printf "%s-controlplane" (include "weir.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <fullname>-datanode */}}
{{- define "weir.dataNode.fullname" -}}
{{- printf "%s-datanode" (include "weir.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* chart name and version, for the helm.sh/chart label */}}
{{- define "weir.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "weir.labels" -}}
helm.sh/chart: {{ include "weir.chart" . }}
app.kubernetes.io/name: {{ include "weir.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: weir
{{- end }}

{{/* Selector labels of one component; call with (dict "root" $ "component" "controlplane"). */}}
{{- define "weir.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weir.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The image, tag defaulting to the chart's appVersion. */}}
{{- define "weir.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The service account's name. */}}
{{- define "weir.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "weir.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding the database credentials. */}}
{{- define "weir.database.secretName" -}}
{{- default (printf "%s-db" (include "weir.fullname" .)) .Values.database.existingSecret }}
{{- end }}

{{/* The Secret holding the bootstrap admin token. */}}
{{- define "weir.bootstrapToken.secretName" -}}
{{- default (printf "%s-bootstrap-token" (include "weir.fullname" .)) .Values.bootstrapToken.existingSecret }}
{{- end }}

{{/* The control plane's in-cluster URL, what data nodes connect to. */}}
{{- define "weir.controlPlane.url" -}}
{{- default (printf "%s://%s:%d" (ternary "https" "http" .Values.tls.enabled) (include "weir.controlPlane.fullname" .) (int .Values.controlPlane.service.port)) .Values.dataNode.controlPlaneUrl }}
{{- end }}

{{/* Labels of one component's resources and pods: the common labels and the component; call with (dict "root" $ "component" "controlplane"). */}}
{{- define "weir.componentLabels" -}}
{{ include "weir.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The Secret with the cluster CA (ca.crt, ca.key) and the control plane's certificate (tls.crt, tls.key). */}}
{{- define "weir.tls.secretName" -}}
{{- default (printf "%s-tls" (include "weir.fullname" .)) .Values.tls.existingSecret }}
{{- end }}
