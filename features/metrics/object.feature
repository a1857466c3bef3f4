Feature: Object metrics
  An Object metric describes one Kubernetes object (the Deployment itself, a
  Service, an Ingress).
  With a value target the ratio value / target scales the number of ready
  pods; with an average value target the value is divided over the scale's
  status replicas and the new count is ceil(value / target).

  @k8s-1.36
  Scenario: Object value target scales the ready pods
    # 150 / 100 = 1.5, two ready pods: ceil(3) = 3.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of Deployment "web" with value 100
    And object metric "requests_per_second" of Deployment "web" is 150
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports "requests_per_second" at 150
    And the HPA "web" has conditions:
      | type           | status | reason             |
      | AbleToScale    | True   | SucceededRescale   |
      | ScalingActive  | True   | ValidMetricFound   |
      | ScalingLimited | False  | DesiredWithinRange |
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound" and message "the HPA was able to successfully calculate a replica count from Deployment metric requests_per_second"
    And an event "SuccessfulRescale" with message "New size: 3; reason: Deployment metric requests_per_second above target" is recorded for the HPA "web"

  Scenario: Only ready pods count for an object value target
    # 200 / 100 = 2, two of the three pods are ready: ceil(2 × 2) = 4.
    Given a deployment "web" with pods:
      | pod   | ready |
      | web-0 | true  |
      | web-1 | true  |
      | web-2 | false |
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of Deployment "web" with value 100
    And object metric "requests_per_second" of Deployment "web" is 200
    When the HPA controller syncs
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports "requests_per_second" at 200

  Scenario: Object average value target
    # 150 over 2 replicas = 75 against 50: ratio 1.5, ceil(150 / 50) = 3.
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of Deployment "web" with average value 50
    And object metric "requests_per_second" of Deployment "web" is 150
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports "requests_per_second" at 75
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  Scenario: Object average value divides over the status replicas during a rollout
    # spec 4, status 2: 100 / (50 × 2) = 1.0 is within tolerance, and the
    # proposal is then the status count, 2.
    Given a deployment "web" with 4 pods
    And the scale of "web" reports 4 spec replicas and 2 status replicas
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of Deployment "web" with average value 50
    And the HPA controller's recommendations for "web" were:
      | age | replicas |
    And object metric "requests_per_second" of Deployment "web" is 100
    When the HPA controller syncs
    Then the deployment "web" has 2 replicas
    And the HPA "web" reports "requests_per_second" at 50
    And an event "SuccessfulRescale" with message "New size: 2; reason: All metrics below target" is recorded for the HPA "web"

  Scenario: An object metric of a Service
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on object metric "requests_per_second" of Service "frontend" with value 100
    And object metric "requests_per_second" of Service "frontend" is 150
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" reports "requests_per_second" at 150
    And an event "SuccessfulRescale" with message "New size: 3; reason: Service metric requests_per_second above target" is recorded for the HPA "web"
