import { Page } from "../ui/Page";

export function StockAlertsPage() {
  return (
    <Page title="Stock alerts">
      <p>Coming soon.</p>
    </Page>
  );
}
