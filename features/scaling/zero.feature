Feature: A target scaled to zero
  When the scale target has zero replicas and minReplicas is not 0, the HPA
  considers autoscaling disabled: it does not touch the target and reports
  ScalingActive=False with reason ScalingDisabled. Scaling the target back up
  by hand resumes autoscaling.

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
