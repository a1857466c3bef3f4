Feature: The API server's answers to bad replica bounds, in every release
  1.36 validates minReplicas and maxReplicas by hand, with the texts of
  declarative validation (its maxReplicas checks were aligned with them
  when the field was wired for it, kubernetes#135412); 1.37 also declares
  them for declarative validation (beta), which runs beside the
  handwritten checks and answers with the same texts. 1.35 says "must be
  greater than 0" of a maxReplicas of 0 or less; from 1.36, 0 (or none) is
  a required value and a negative one "must be greater than or equal to 1",
  as the genuine v1.36.2 API server answers.

  @k8s-1.35
  Scenario: Under 1.35 maxReplicas 0 must be greater than 0
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
  Scenario: From 1.36 maxReplicas 0 is a required value
    Then the API server refuses the HPA saying "spec.maxReplicas: Required value: must be set and greater than 0":
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        maxReplicas: 0
      """

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: From 1.36 a negative maxReplicas must be at least 1
    Then the API server refuses the HPA saying "spec.maxReplicas: Invalid value: -1: must be greater than or equal to 1":
      """yaml
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata: {name: web}
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
        maxReplicas: -1
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
