Feature: A target scaled to zero
  When the scale target has zero replicas and minReplicas is not 0, the HPA
  considers autoscaling disabled: it does not touch the target and reports
  ScalingActive=False with reason ScalingDisabled. Scaling the target back up
  by hand resumes autoscaling.

  The ScaledToZero condition of HPAScaleToZero exists from Kubernetes 1.36;
  how 1.35 scales to zero is in features/versions/scaled_to_zero_condition.feature.

  Scenario: A target with zero replicas is left alone
    Given a deployment "web" with 0 pods
    And an HPA "web" for deployment "web" with min 1 and max 5 replicas
    And the HPA "web" scales on cpu utilization 50%
    When the HPA controller syncs
    Then the deployment "web" stays at 0 replicas for 2m
    And the HPA "web" wants 0 replicas
    And the HPA "web" has conditions:
      | type          | status | reason            |
      | AbleToScale   | True   | SucceededGetScale |
      | ScalingActive | False  | ScalingDisabled   |
    And the HPA "web" has condition "ScalingActive" "False" with reason "ScalingDisabled" and message "scaling is disabled since the replica count of the target is zero"
    And no event "SuccessfulRescale" is recorded for the HPA "web"

  Scenario: Scaling to zero by hand pauses autoscaling until scaled up by hand
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 5 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 50
    And the pods of "web" report "http_requests" of 50 and 50
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    When the deployment "web" is scaled to 0 replicas
    Then the deployment "web" stays at 0 replicas for 1m
    And the HPA "web" wants 0 replicas
    And the HPA "web" has condition "ScalingActive" "False" with reason "ScalingDisabled"
    And the HPA "web" has condition "AbleToScale" "True" with reason "SucceededGetScale"
    When the deployment "web" is scaled to 2 replicas
    And the pods of "web" report "http_requests" of 100 and 100
    And the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  # The cluster's API server shares the gate: with it on, it accepts
  # minReplicas 0 with an Object or External metric.
  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: With HPAScaleToZero an external metric scales the target to zero and back
    # an empty queue asks for 0 replicas; 35 messages against 10 ask for
    # ceil(3.5) = 4 from zero.
    Given the HPA controller runs with:
      | flag          | value               |
      | feature-gates | HPAScaleToZero=true |
    And a deployment "worker" with 2 pods
    And the HPA:
      """
      apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      metadata:
        name: worker
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
        minReplicas: 0
        maxReplicas: 10
        metrics:
        - type: External
          external:
            metric: {name: queue_messages}
            target: {type: Value, value: "10"}
        behavior:
          scaleDown: {stabilizationWindowSeconds: 0}
      """
    And external metric "queue_messages" with selector "" is 0
    When the HPA controller syncs
    Then the deployment "worker" has 0 replicas
    And the HPA "worker" has condition "ScaledToZero" "True"
    When external metric "queue_messages" with selector "" is 35
    And 15s pass
    Then the deployment "worker" has 4 replicas
    And the HPA "worker" has condition "ScaledToZero" "False"
    And the HPA "worker" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: With HPAScaleToZero every rescale not to zero records ScaledToZero False
    # upstream sets the condition on every successful rescale that is not to
    # zero, adding it when the HPA has never been at zero.
    Given the HPA controller runs with:
      | flag          | value               |
      | feature-gates | HPAScaleToZero=true |
    And a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 5 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has condition "ScaledToZero" "False" with reason "NotScaledToZero" and message "the HPA controller did not scale the workload to zero"
    And an event "SuccessfulRescale" with message "New size: 3; reason: pods metric http_requests above target" is recorded for the HPA "web"

  @k8s-1.36 @k8s-1.37 @k8s-1.38
  Scenario: Scaling from zero to minReplicas when the metric asks for none keeps an empty reason
    # held at zero by the HPA (ScaledToZero True), minReplicas 2, an empty
    # queue: normalization lifts 0 to minReplicas before upstream's fallback
    # reason could apply, so kube-controller-manager records "reason: ".
    Given the HPA controller runs with:
      | flag          | value               |
      | feature-gates | HPAScaleToZero=true |
    And a deployment "worker" with 0 pods
    And an HPA "worker" for deployment "worker" with min 2 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and value 10
    And the HPA "worker" has status:
      """
      currentReplicas: 0
      desiredReplicas: 0
      conditions:
      - type: ScaledToZero
        status: "True"
        reason: ScaledToZero
        message: the HPA controller scaled the workload to zero
        lastTransitionTime: "2025-12-31T23:00:00Z"
      """
    And external metric "queue_messages" with selector "" is 0
    When the HPA controller syncs
    Then the deployment "worker" has 2 replicas
    And an event "SuccessfulRescale" with message "New size: 2; reason: " is recorded for the HPA "worker"
    And the HPA "worker" has condition "ScaledToZero" "False" with reason "NotScaledToZero"
