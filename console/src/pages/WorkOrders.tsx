import { Page } from "../ui/Page";

export function WorkOrdersPage() {
  return (
    <Page title="Work orders">
      <p>Coming soon.</p>
    </Page>
  );
}
