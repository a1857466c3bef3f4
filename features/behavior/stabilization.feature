Feature: Stabilization windows
  The controller remembers its recent recommendations. A scale-down goes no
  lower than the highest recommendation within the downscale window (5m by
  default, --horizontal-pod-autoscaler-downscale-stabilization, or
  behavior.scaleDown.stabilizationWindowSeconds); with behavior a scale-up
  goes no higher than the lowest recommendation within
  behavior.scaleUp.stabilizationWindowSeconds (0 by default). Time here is
  virtual: the controller syncs every 15s while minutes pass.

  @k8s-1.36
  Scenario: Without behavior a scale-down waits for the 5-minute window
    # 4 pods at 10% against 50% want 1, but 4 was recommended at the start.
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 100m, 100m, 100m and 100m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" wants 4 replicas
    And the HPA "web" reports cpu utilization 10%
    And the HPA "web" has condition "AbleToScale" "True" with reason "ScaleDownStabilized" and message "recent recommendations were higher than current one, applying the highest recent recommendation"
    And the deployment "web" stays at 4 replicas for 4m30s
    When 1m passes
    Then the deployment "web" has 1 replicas
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | ReadyForNewScale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And an event "SuccessfulRescale" with message "New size: 1; reason: All metrics below target" is recorded for the HPA "web"

  Scenario: A shorter downscale stabilization flag
    Given the HPA controller runs with:
      | flag                                              | value |
      | horizontal-pod-autoscaler-downscale-stabilization | 1m    |
    And a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 100m, 100m, 100m and 100m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has condition "AbleToScale" "True" with reason "ScaleDownStabilized"
    And the deployment "web" stays at 4 replicas for 45s
    When 1m passes
    Then the deployment "web" has 1 replicas

  Scenario: Spans of time written in words wait as long as Go's
    # The same window of one minute, its waits written as people say them.
    Given the HPA controller runs with:
      | flag                                              | value |
      | horizontal-pod-autoscaler-downscale-stabilization | 1m    |
    And a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the pods of "web" report "cpu" of 100m, 100m, 100m and 100m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the deployment "web" stays at 4 replicas for 45 seconds
    When 1 minute passes
    Then the deployment "web" has 1 replicas
    And an event "SuccessfulRescale" with message "New size: 1; reason: All metrics below target" is recorded for the HPA "web"

  Scenario: A scale-down stabilization window in behavior
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA "web" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 60
      """
    And the pods of "web" report "cpu" of 100m, 100m, 100m and 100m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has condition "AbleToScale" "True" with reason "ScaleDownStabilized" and message "recent recommendations were higher than current one, applying the highest recent recommendation"
    And the deployment "web" stays at 4 replicas for 45s
    When 1m passes
    Then the deployment "web" has 1 replicas
    And the HPA "web" has condition "AbleToScale" "True" with reason "ReadyForNewScale"
    And the HPA "web" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"

  Scenario: A scale-up stabilization window in behavior
    # 80% against 50% wants 4 at once, but 2 (the count at the start) stays
    # the lowest recommendation for 2 minutes.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA "web" has behavior:
      """
      scaleUp:
        stabilizationWindowSeconds: 120
      """
    And the pods of "web" report "cpu" of 900m and 700m
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA "web" has condition "AbleToScale" "True" with reason "ScaleUpStabilized" and message "recent recommendations were lower than current one, applying the lowest recent recommendation"
    And the deployment "web" stays at 2 replicas for 1m45s
    When 30s pass
    Then the deployment "web" has 4 replicas

  @virtual-clock
  Scenario: Seeded recommendations expire one after the other
    Given a deployment "web" with 6 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on cpu utilization 50%
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
      | 4m  | 6        |
      | 1m  | 5        |
    And the pods of "web" report "cpu" of 0, 0, 0, 0, 0 and 0
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And the HPA controller's recommendations for "web" are:
      | age | replicas |
      | 4m  | 6        |
      | 1m  | 5        |
      | 0s  | 0        |
    And the deployment "web" stays at 6 replicas for 45s
    When 30s pass
    Then the deployment "web" has 5 replicas
    And the deployment "web" stays at 5 replicas for 2m
    When 1m passes
    Then the deployment "web" has 1 replicas
    And the HPA "web" has condition "ScalingLimited" "True" with reason "TooFewReplicas"

  Scenario: An oscillating load does not flap the replicas with the default window
    # the queue alternates between 400 and 200 messages every minute against
    # 100 per pod: 4 pods, then a wish for 2 that the window holds back.
    Given a deployment "worker" with 4 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 100
    And external metric "queue_messages" with selector "" is 400
    When the HPA controller syncs
    Then the deployment "worker" is not rescaled
    When external metric "queue_messages" with selector "" is 200
    Then the deployment "worker" stays at 4 replicas for 1m
    And the HPA "worker" has condition "AbleToScale" "True" with reason "ScaleDownStabilized"
    When external metric "queue_messages" with selector "" is 400
    Then the deployment "worker" stays at 4 replicas for 1m
    When external metric "queue_messages" with selector "" is 200
    Then the deployment "worker" stays at 4 replicas for 1m
    When external metric "queue_messages" with selector "" is 400
    Then the deployment "worker" stays at 4 replicas for 1m
    And the HPA "worker" has condition "AbleToScale" "True" with reason "ReadyForNewScale"
    And no event "SuccessfulRescale" is recorded for the HPA "worker"

  Scenario: The same oscillating load flaps the replicas without a scale-down window
    Given a deployment "worker" with 4 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 100
    And the HPA "worker" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 0
      """
    And external metric "queue_messages" with selector "" is 400
    When the HPA controller syncs
    Then the deployment "worker" is not rescaled
    When external metric "queue_messages" with selector "" is 200
    And 15s pass
    Then the deployment "worker" has 2 replicas
    When external metric "queue_messages" with selector "" is 400
    And 15s pass
    Then the deployment "worker" has 4 replicas
    When external metric "queue_messages" with selector "" is 200
    And 15s pass
    Then the deployment "worker" has 2 replicas
    And an event "SuccessfulRescale" with message "New size: 2; reason: All metrics below target" is recorded for the HPA "worker"

  @virtual-clock
  Scenario: A 10-minute scale-down window holds for 10 virtual minutes
    # The recommendation of 4 taken at the first sync stays inside the
    # 600-second window until exactly 600 s later (windows compare strictly),
    # so the target holds at 4 through 9m45s and drops to 1 at 10m.
    Given a deployment "web" with 4 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 100
    And the HPA "web" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 600
      """
    And the pods of "web" report "http_requests" of 100, 100, 100 and 100
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    When the pods of "web" report "http_requests" of 10, 10, 10 and 10
    Then the deployment "web" stays at 4 replicas for 9m45s
    And the HPA "web" has condition "AbleToScale" "True" with reason "ScaleDownStabilized"
    When 15s pass
    Then the deployment "web" has 1 replicas
    And the HPA "web" has condition "AbleToScale" "True" with reason "SucceededRescale"
    And the HPA "web" last scaled 0s ago
