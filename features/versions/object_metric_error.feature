Feature: The object-metric error names its object in order from Kubernetes 1.37
  Through 1.36 upstream's replica calculator formats a failed object-metric
  read with its arguments out of order ("unable to get metric %s: %v on %s
  %s/%s" with the name, kind, namespace, object name and error), so the
  condition reads "unable to get metric rps: Deployment on default web/..."
  From 1.37 (k/k #139029) it reads "unable to get metric rps on Deployment
  default/web: ...".

  Background:
    Given a namespace "shop"
    And a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "rps" of Deployment "web" with value 100
    And object metric "rps" of Deployment "web" is 150
    And the custom metrics API fails

  @k8s-1.36
  Scenario: Under 1.36 the kind comes first
    When the HPA controller syncs
    Then the HPA "web" has condition "ScalingActive" "False" with reason "FailedGetObjectMetric" and message "the HPA was unable to compute the replica count: unable to get metric rps: Deployment on shop web/unable to fetch metrics from custom metrics API: scripted fault: 500 /apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/deployments.apps/web/rps"

  @k8s-1.37 @k8s-1.38
  Scenario: From 1.37 the object is named as kind namespace/name
    When the HPA controller syncs
    Then the HPA "web" has condition "ScalingActive" "False" with reason "FailedGetObjectMetric" and message "the HPA was unable to compute the replica count: unable to get metric rps on Deployment shop/web: unable to fetch metrics from custom metrics API: scripted fault: 500 /apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/deployments.apps/web/rps"
