Feature: Scaling policies
  behavior.scaleUp and behavior.scaleDown limit how fast the replicas change:
  a Pods policy allows a number of pods per period, a Percent policy a
  percentage of the count at the start of the period (rounded up on the way
  up, down on the way down). selectPolicy Max takes the policy allowing the
  largest change, Min the smallest, Disabled forbids that direction. Here an
  external queue of 100 messages against 10 per pod always asks for 10 pods,
  and a queue of 20 for 2.

  @k8s-1.36
  Scenario: A Pods policy adds at most 2 pods per minute
    Given a deployment "worker" with 2 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleUp:
        policies:
        - type: Pods
          value: 2
          periodSeconds: 60
      """
    And external metric "queue_messages" with selector "" is 100
    When the HPA controller syncs
    Then the deployment "worker" has 4 replicas
    And the HPA "worker" has conditions:
      | type           | status | reason           |
      | AbleToScale    | True   | SucceededRescale |
      | ScalingActive  | True   | ValidMetricFound |
      | ScalingLimited | True   | ScaleUpLimit     |
    And the HPA "worker" has condition "ScalingLimited" "True" with reason "ScaleUpLimit" and message "the desired replica count is increasing faster than the maximum scale rate"
    And the deployment "worker" stays at 4 replicas for 45s
    When 30s pass
    Then the deployment "worker" has 6 replicas

  Scenario: A Percent policy rounds up
    # 3 pods + 50% = 4.5, rounded up to 5.
    Given a deployment "worker" with 3 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleUp:
        policies:
        - type: Percent
          value: 50
          periodSeconds: 60
      """
    And external metric "queue_messages" with selector "" is 100
    When the HPA controller syncs
    Then the deployment "worker" has 5 replicas
    And the HPA "worker" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"

  Scenario Outline: selectPolicy <select> picks between a Pods and a Percent policy
    # from 3 pods: Pods 4 allows 7, Percent 50 allows 5.
    Given a deployment "worker" with 3 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleUp:
        selectPolicy: <select>
        policies:
        - type: Pods
          value: 4
          periodSeconds: 60
        - type: Percent
          value: 50
          periodSeconds: 60
      """
    And external metric "queue_messages" with selector "" is 100
    When the HPA controller syncs
    Then the deployment "worker" has <replicas> replicas
    And the HPA "worker" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"

    Examples:
      | select | replicas |
      | Max    | 7        |
      | Min    | 5        |

  Scenario: selectPolicy Disabled forbids scaling up
    Given a deployment "worker" with 3 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleUp:
        selectPolicy: Disabled
      """
    And external metric "queue_messages" with selector "" is 100
    When the HPA controller syncs
    Then the deployment "worker" stays at 3 replicas for 2m
    And the HPA "worker" wants 3 replicas
    And the HPA "worker" has conditions:
      | type           | status | reason           |
      | AbleToScale    | True   | ReadyForNewScale |
      | ScalingActive  | True   | ValidMetricFound |
      | ScalingLimited | True   | ScaleUpLimit     |

  Scenario: A Pods policy removes at most 2 pods per minute
    Given a deployment "worker" with 10 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 0
        policies:
        - type: Pods
          value: 2
          periodSeconds: 60
      """
    And external metric "queue_messages" with selector "" is 20
    When the HPA controller syncs
    Then the deployment "worker" has 8 replicas
    And the HPA "worker" has condition "ScalingLimited" "True" with reason "ScaleDownLimit" and message "the desired replica count is decreasing faster than the maximum scale rate"
    And the deployment "worker" stays at 8 replicas for 45s
    When 30s pass
    Then the deployment "worker" has 6 replicas
    And an event "SuccessfulRescale" with message "New size: 6; reason: All metrics below target" is recorded for the HPA "worker"

  Scenario: A Percent policy halves the replicas per minute, rounding down
    # 10 → 5 at once; a minute later 5 - 50% = 2.5 is rounded down to 2,
    # which is what the queue asks for.
    Given a deployment "worker" with 10 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 0
        policies:
        - type: Percent
          value: 50
          periodSeconds: 60
      """
    And external metric "queue_messages" with selector "" is 20
    When the HPA controller syncs
    Then the deployment "worker" has 5 replicas
    And the HPA "worker" has condition "ScalingLimited" "True" with reason "ScaleDownLimit"
    And the deployment "worker" stays at 5 replicas for 45s
    When 30s pass
    Then the deployment "worker" has 2 replicas
    And the HPA "worker" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"

  Scenario: selectPolicy Disabled forbids scaling down
    Given a deployment "worker" with 10 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleDown:
        stabilizationWindowSeconds: 0
        selectPolicy: Disabled
      """
    And external metric "queue_messages" with selector "" is 20
    When the HPA controller syncs
    Then the deployment "worker" stays at 10 replicas for 2m
    And the HPA "worker" has conditions:
      | type           | status | reason           |
      | AbleToScale    | True   | ReadyForNewScale |
      | ScalingActive  | True   | ValidMetricFound |
      | ScalingLimited | True   | ScaleDownLimit   |

  @virtual-clock
  Scenario: Seeded scale events count against the policy
    # 2 pods were added 30s ago: the period started at 2, so 4 is the limit
    # until that event is a minute old.
    Given a deployment "worker" with 4 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleUp:
        policies:
        - type: Pods
          value: 2
          periodSeconds: 60
      """
    And the HPA controller's scale events for "worker" were:
      | age | direction | pods |
      | 30s | up        | 2    |
    And external metric "queue_messages" with selector "" is 100
    When the HPA controller syncs
    Then the deployment "worker" is not rescaled
    And the HPA "worker" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
    And the HPA controller's scale events for "worker" are:
      | age | direction | pods |
      | 30s | up        | 2    |
    And the deployment "worker" stays at 4 replicas for 15s
    When 30s pass
    Then the deployment "worker" has 6 replicas

  @virtual-clock
  Scenario: A lengthened period counts again the scale event kept as outdated
    # Storing a scale-up marks the events older than the longest scale-up
    # period (60s) as outdated, keeps them, and reuses the last outdated
    # slot: 1 pod (90s ago) makes room for this scale-up, 3 pods (100s ago)
    # stay. The limits count events by their time alone, so once the period
    # is 3 minutes, 3 + 1 pods were added in it: the period started at 1
    # replica and allows 1 + 4 = 5, which is the count already.
    Given a deployment "worker" with 4 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 20 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and average value 10
    And the HPA "worker" has behavior:
      """
      scaleUp:
        policies:
        - type: Pods
          value: 1
          periodSeconds: 60
      """
    And the HPA controller's scale events for "worker" were:
      | age  | direction | pods |
      | 100s | up        | 3    |
      | 90s  | up        | 1    |
    And external metric "queue_messages" with selector "" is 100
    When the HPA controller syncs
    Then the deployment "worker" has 5 replicas
    And the HPA controller's scale events for "worker" are:
      | age  | direction | pods | outdated |
      | 100s | up        | 3    | yes      |
      | 0s   | up        | 1    | no       |
    When the HPA "worker" has behavior:
      """
      scaleUp:
        policies:
        - type: Pods
          value: 4
          periodSeconds: 180
      """
    And the HPA controller syncs
    Then the deployment "worker" has 5 replicas
    And the HPA "worker" has condition "ScalingLimited" "True" with reason "ScaleUpLimit"
    # 3 pods leave the 3-minute period 80s later: then only 1 pod was
    # added in it, the period started at 4, and 4 + 4 = 8 are allowed.
    And the deployment "worker" stays at 5 replicas for 75s
    When 15s pass
    Then the deployment "worker" has 8 replicas
