Feature: External metrics
  An External metric comes from outside the cluster (a queue length). All
  series that match the metric selector are summed. With a value target the
  ratio scales the ready pods; with an average value target the new count is
  ceil(sum / target), and the tolerance is checked against the status replicas.

  @k8s-1.36
  Scenario: External value target sums the series and scales the ready pods
    # 10 + 5 = 15 against 10: ratio 1.5, three ready pods: ceil(4.5) = 5.
    Given a deployment "worker" with 3 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "queue=jobs" and value 10
    And external metric "queue_messages" with selector "queue=jobs" is 10 and 5
    When the HPA controller syncs
    Then the deployment "worker" has 5 replicas
    And the HPA "worker" reports "queue_messages" at 15
    And the HPA "worker" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |

  Scenario: External metric without a selector
    # 40 against 20: ratio 2, two ready pods: 4.
    Given a deployment "worker" with 2 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "" and value 20
    And external metric "queue_messages" with selector "" is 40
    When the HPA controller syncs
    Then the deployment "worker" has 4 replicas
    And the HPA "worker" reports "queue_messages" at 40

  Scenario: External average value target
    # 30 over 3 replicas = 10 against 5: ratio 2, ceil(30 / 5) = 6.
    Given a deployment "worker" with 3 pods
    And an HPA "worker" for deployment "worker" with min 1 and max 10 replicas
    And the HPA "worker" scales on external metric "queue_messages" with selector "queue=jobs" and average value 5
    And external metric "queue_messages" with selector "queue=jobs" is 30
    When the HPA controller syncs
    Then the deployment "worker" has 6 replicas
    And the HPA "worker" reports "queue_messages" at 10
    And the HPA "worker" has condition "ScalingLimited" "False" with reason "DesiredWithinRange"

  Scenario: The first sync after a one-pod deployment counts its pod
    # 50 over 1 replica = 50 against 20: ceil(50 / 20) = 3. On a real
    # cluster the Deployment's status counts its pod a moment after the pod
    # exists, and "Given" waits for it: synced before, /scale would say 0
    # replicas and the status an average of 50 over none.
    Given a deployment "orders-worker" with 1 pod
    And an HPA "orders-worker" for deployment "orders-worker" with min 1 and max 10 replicas
    And the HPA "orders-worker" scales on external metric "orders_pending" with selector "" and average value 20
    And external metric "orders_pending" with selector "" is 50
    When the HPA controller syncs
    Then the deployment "orders-worker" has 3 replicas
    And the HPA "orders-worker" reports "orders_pending" at 50
