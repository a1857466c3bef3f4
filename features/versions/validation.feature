Feature: The API server's answers to bad replica bounds, in every release
  1.36 validates minReplicas and maxReplicas by hand; 1.37 also declares
  them for declarative validation (beta), which runs beside the
  handwritten checks and answers with the same texts. A user sees the same
  422 from every release.

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: maxReplicas 0 is refused
    Then the API server refuses the HPA saying "spec.maxReplicas: Invalid value: 0: must be greater than 0":
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        maxReplicas: 0
      """

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: maxReplicas below minReplicas is refused
    Then the API server refuses the HPA saying "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`":
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        minReplicas: 3
        maxReplicas: 2
      """

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: A negative minReplicas is refused
    Then the API server refuses the HPA saying "spec.minReplicas: Invalid value: -1: must be greater than or equal to":
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        minReplicas: -1
        maxReplicas: 2
      """
